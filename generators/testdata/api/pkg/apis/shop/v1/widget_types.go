package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Widget is a thing for sale.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +resource:path=widgets,strategy=WidgetStrategy,shortNames=wd;wdg,categories=all
// +subresource:status
// +subresource:scale:specpath=.spec.count,statuspath=.status.count
// +printcolumn:name=Color,type=string,JSONPath=.spec.color
// +printcolumn:name=Port,type=string,JSONPath=.spec.port,priority=1
// +selectablefield:JSONPath=.spec.color
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state.
type WidgetSpec struct {
	// Color of the widget.
	// +kubebuilder:validation:Enum=red;blue
	Color Color `json:"color,omitempty"`
	// Port serves the widget.
	Port intstr.IntOrString `json:"port,omitempty"`
	// Resources it needs.
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Count of widgets.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=1
	Count int32 `json:"count,omitempty"`
	// SKU identifies the widget.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Pattern=`^[A-Z]{3}-[0-9]+$`
	// +kubebuilder:validation:MaxLength=12
	SKU string `json:"sku"`
	// Ratio is optional.
	// +kubebuilder:validation:Minimum=0.5
	Ratio *float64 `json:"ratio,omitempty"`
	// Parts lists the parts.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	Parts []Part `json:"parts,omitempty"`
	// Tags is a named slice type.
	// +kubebuilder:validation:MaxItems=3
	Tags Tags `json:"tags,omitempty"`
	// Extras is a named map of pointers to structs with markers.
	Extras PartMap `json:"extras,omitempty"`
}

// Tags are free-form tags.
type Tags []string

// PartMap maps names to parts.
type PartMap map[string]*Part

// Part is one part of a widget.
type Part struct {
	// Name of the part.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// Color is a widget colour.
type Color string

// The known colours.
const (
	Red  Color = "red"
	Blue Color = "blue"
)

// Green is typed by conversion, as in sample-apiserver's wardle.
const Green = Color("green")

// WidgetStatus is the observed state.
type WidgetStatus struct {
	Sold  bool  `json:"sold,omitempty"`
	Count int32 `json:"count,omitempty"`
}

// WidgetList is a list of widgets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// Shelf holds widgets, across the whole cluster.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +resource:path=shelves,scope=Cluster
type Shelf struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Widgets           []string `json:"widgets,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ShelfList is a list of shelves. Its markers stand apart, as in wardle.
type ShelfList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shelf `json:"items"`
}

// hidden is not copied: helpers outside *_types.go files are versioned-only.
var hidden = 1
