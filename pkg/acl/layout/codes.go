package layout

import "github.com/aclc-dev/aclc/pkg/acl/source"

// Codes of how a cluster holds YuniKorn's configuration.
const (
	CodeUnsupportedKind    = "unsupported-kind"
	CodeNotAnObject        = "not-an-object"
	CodeNamespaceName      = "namespace-without-name"
	CodeDataNotMap         = "data-not-map"
	CodeNotBase64          = "binarydata-not-base64"
	CodeValueNotString     = "value-not-string"
	CodeNotMounted         = "not-mounted-configmap"
	CodeNotRegularFile     = "not-regular-file"
	CodeNamespaceMismatch  = "namespace-mismatch"
	CodeSecondConfigMap    = "second-configmap"
	CodeKeySetTwice        = "key-set-twice"
	CodeBinaryDataConflict = "binarydata-conflict"
	// CodeNamespaceTwice: the sources of one build give a Namespace twice.
	CodeNamespaceTwice = "namespace-twice"

	CodeSkippedConfigMap  = "skipped-configmap"
	CodeSkippedObject     = "skipped-object"
	CodeBinaryDataBlanked = "binarydata-blanked"
	CodeBinaryDataDropped = "binarydata-dropped"
)

// Codes lists the codes of this package's errors and warnings.
func Codes() []source.CodeInfo {
	return []source.CodeInfo{
		source.ErrorCode(CodeUnsupportedKind, "a file of objects holds no ConfigMap or Namespace, only kinds aclc does not read"),
		source.ErrorCode(CodeNotAnObject, "a document or List item that is not a Kubernetes object (no kind, not a map)"),
		source.ErrorCode(CodeNamespaceName, "a Namespace without metadata.name"),
		source.ErrorCode(CodeDataNotMap, "a ConfigMap's data or binaryData, or an object's labels or annotations, is not a map"),
		source.ErrorCode(CodeNotBase64, "a binaryData value is not base64"),
		source.ErrorCode(CodeValueNotString, "a ConfigMap value is not a string (an unquoted number or bool)"),
		source.ErrorCode(CodeNotMounted, "a directory that is neither a mounted ConfigMap nor a directory of manifests"),
		source.ErrorCode(CodeNotRegularFile, "a mounted key or manifest that is not a regular file"),
		source.ErrorCode(CodeNamespaceMismatch, "YuniKorn's two ConfigMaps are in different namespaces"),
		source.ErrorCode(CodeSecondConfigMap, "a second yunikorn-defaults or yunikorn-configs"),
		source.ErrorCode(CodeKeySetTwice, "two parts of one ConfigMap (a manifest and a bare file) set one key"),
		source.ErrorCode(CodeBinaryDataConflict, "two binaryData keys set one key (YuniKorn applies them in random order)"),
		source.ErrorCode(CodeNamespaceTwice, "the sources give one Namespace twice"),
		source.WarningCode(CodeSkippedConfigMap, "a ConfigMap YuniKorn does not read"),
		source.WarningCode(CodeSkippedObject, "an object aclc does not read"),
		source.WarningCode(CodeBinaryDataBlanked, "a binaryData key without .gz: YuniKorn sets it empty"),
		source.WarningCode(CodeBinaryDataDropped, "a binaryData value that does not gunzip: YuniKorn drops it"),
	}
}
