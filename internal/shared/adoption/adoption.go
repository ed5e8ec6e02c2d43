// Package adoption holds the wire types of the adoption API: what
// `apiserver-boot adopt` and a generated apiserver exchange to move a CRD's
// objects, with their identity, into the project's store. No server code.
package adoption

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

const (
	Group   = "adoption.apiserver-boot.io"
	Version = "v1alpha1"
	Verb    = "adopt"
)

// Path is where a resource's adoption endpoint is: /apis/adoption.apiserver-boot.io/v1alpha1/<resource>.<group>
func Path(group, resource string) string {
	return "/apis/" + Group + "/" + Version + "/" + resource + "." + group
}

// ParseResource splits "<resource>.<group>" (the first dot-separated label is the resource).
func ParseResource(s string) (group, resource string, ok bool) {
	resource, group, ok = strings.Cut(s, ".")
	if !ok || resource == "" || group == "" {
		return "", "", false
	}
	return group, resource, true
}

// State is the answer to GET Path(group, resource).
type State struct {
	metav1.TypeMeta `json:",inline"` // apiVersion adoption.apiserver-boot.io/v1alpha1, kind State
	Group           string           `json:"group"`
	Resource        string           `json:"resource"`
	KindName        string           `json:"kindName"` // the resource's kind, e.g. CronTab
	Namespaced      bool             `json:"namespaced"`
	StorageVersion  string           `json:"storageVersion"`
	Versions        []string         `json:"versions"`        // served versions, most preferred first
	ResourceVersion string           `json:"resourceVersion"` // the store's current revision
	Floor           string           `json:"floor,omitempty"` // revision below which LIST/WATCH of the resource answer 410 (set by Seal)
	Objects         []Key            `json:"objects"`         // every object of the resource now in the project's store
}
type Key struct {
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid,omitempty"`
}

// Batch is the body of POST Path(group, resource).
type Batch struct {
	metav1.TypeMeta `json:",inline"`       // kind Batch
	Validate        bool                   `json:"validate,omitempty"` // dry-run create each object through the real create path; store and remove nothing
	Objects         []runtime.RawExtension `json:"objects,omitempty"`  // whole objects (JSON) in any served version of the group
	Remove          []Key                  `json:"remove,omitempty"`   // stale copies removed from the store (not with Validate)
	Seal            bool                   `json:"seal,omitempty"`     // after the writes, record Floor = the store's revision now (not with Validate)
}

// BatchResult answers a Batch: one Result per object, in order.
type BatchResult struct {
	metav1.TypeMeta `json:",inline"` // kind BatchResult
	Results         []Result         `json:"results"`
	ResourceVersion string           `json:"resourceVersion"` // the store's revision after the batch
	Floor           string           `json:"floor,omitempty"`
}
type Result struct {
	Namespace       string         `json:"namespace,omitempty"`
	Name            string         `json:"name"`
	ResourceVersion string         `json:"resourceVersion,omitempty"` // the stored copy's, when stored
	Error           *metav1.Status `json:"error,omitempty"`           // why this object was refused (with causes: field, message)
}
