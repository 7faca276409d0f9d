package source

// Severities of a code: an error stops the source from loading, a warning
// is about a source that loads.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// CodeInfo documents one code: the rule it pins, and whether breaking the
// rule is an error or a warning.
type CodeInfo struct {
	Code     string
	Severity string
	// Rule says, in a phrase, what the code is about.
	Rule string
}

// Codes of the errors every YAML source shares, whatever its kind.
const (
	CodeYAMLSyntax   = "yaml-syntax"
	CodeYAMLAliasing = "yaml-aliasing"
	CodeDuplicateKey = "duplicate-key"
	CodeKeyNotString = "key-not-string"
	CodeMergeKey     = "merge-key"
	CodeWrongType    = "wrong-type"
	CodeNotOneOf     = "not-one-of"
	CodeEmptyValue   = "empty-value"
	CodeInvalidValue = "invalid-value"
	CodeUnknownKey   = "unknown-key"
	CodeMissingKey   = "missing-key"
	// CodeTooLarge: a text or value over the bound aclc reads.
	CodeTooLarge = "too-large"
)

// Codes lists the codes of this package's errors.
func Codes() []CodeInfo {
	return []CodeInfo{
		ErrorCode(CodeYAMLSyntax, "the text is not YAML (or not the JSON a format asks for)"),
		ErrorCode(CodeYAMLAliasing, "an alias expands past the bound, or an anchor contains itself"),
		ErrorCode(CodeDuplicateKey, "a mapping names one key twice"),
		ErrorCode(CodeKeyNotString, "a mapping key is not a string"),
		ErrorCode(CodeMergeKey, "a merge key (<<) where the format has none, or a merge of something that is not a map"),
		ErrorCode(CodeWrongType, "a value of the wrong type (a list for a string, a negative number for a count)"),
		ErrorCode(CodeNotOneOf, "a value the format does not list"),
		ErrorCode(CodeEmptyValue, "an empty value or list where one is needed"),
		ErrorCode(CodeInvalidValue, "a value the format's schema refuses otherwise"),
		ErrorCode(CodeUnknownKey, "a key the format does not have (keys are case-sensitive)"),
		ErrorCode(CodeMissingKey, "a key the format requires is missing"),
		ErrorCode(CodeTooLarge, "a text with more YAML nodes, or a file or value larger, than aclc reads"),
	}
}

// ErrorCode documents the code of an error.
func ErrorCode(code, rule string) CodeInfo {
	return CodeInfo{Code: code, Severity: SeverityError, Rule: rule}
}

// WarningCode documents the code of a warning.
func WarningCode(code, rule string) CodeInfo {
	return CodeInfo{Code: code, Severity: SeverityWarning, Rule: rule}
}
