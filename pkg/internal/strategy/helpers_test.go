package strategy

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

var schemaGR = schema.GroupResource{Group: "example.com", Resource: "widgets"}

func mustPath(p string) fieldpath.Path { return fieldpath.MakePathOrDie(p) }
