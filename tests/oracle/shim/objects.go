package shim

import "k8s.io/apimachinery/pkg/runtime"

type runtimeObject = runtime.Object

func toObjects(xs []runtimeObject) []runtime.Object { return xs }
