package gatekeeper

import (
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// decodesAsReview reports why a corpus input is not something the API
// server sends: it must decode as an admission.k8s.io/v1 AdmissionReview
// for CREATE or UPDATE, with its objects decoding as their kinds' types.
func decodesAsReview(in map[string]any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(raw, &ar); err != nil {
		return fmt.Errorf("the review does not decode: %v", err)
	}
	r := ar.Request
	if r == nil {
		return fmt.Errorf("no request")
	}
	if r.Operation != admissionv1.Create && r.Operation != admissionv1.Update {
		return fmt.Errorf("operation %q is not sent for this webhook", r.Operation)
	}
	if len(r.Object.Raw) == 0 || string(r.Object.Raw) == "null" {
		return fmt.Errorf("no object")
	}
	objs := [][]byte{r.Object.Raw}
	if r.Operation == admissionv1.Update {
		if len(r.OldObject.Raw) == 0 || string(r.OldObject.Raw) == "null" {
			return fmt.Errorf("UPDATE without oldObject")
		}
		objs = append(objs, r.OldObject.Raw)
	}
	for _, o := range objs {
		var target any
		switch r.Kind.Kind {
		case "Pod":
			target = &corev1.Pod{}
		case "Deployment":
			target = &appsv1.Deployment{}
		case "ReplicaSet":
			target = &appsv1.ReplicaSet{}
		case "StatefulSet":
			target = &appsv1.StatefulSet{}
		case "DaemonSet":
			target = &appsv1.DaemonSet{}
		case "Job":
			target = &batchv1.Job{}
		case "CronJob":
			target = &batchv1.CronJob{}
		default:
			var m map[string]any
			target = &m
		}
		if err := json.Unmarshal(o, target); err != nil {
			return fmt.Errorf("the %s object does not decode: %v", r.Kind.Kind, err)
		}
	}
	return nil
}
