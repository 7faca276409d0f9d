package yunikorn

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/aclc-dev/aclc/internal/yamlbound"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// Load parses and validates a YuniKorn queue configuration from one file;
// name is used in error messages. The file is read as a cluster holds it
// (package layout): a bare queues.yaml, ConfigMaps (one or several
// documents, a kind: List) or a plain map of ConfigMap keys; the queue
// configuration is the flattened <policyGroup>.yaml, and YuniKorn's
// default configuration when there is none (see FromLayout).
//
// Every error satisfies errors.Is(err, ErrInvalidConfig) and is a
// *SourceError or SourceErrors.
func Load(name string, data []byte) (*SchedulerConfig, error) {
	return LoadAs(name, data, release.Default())
}

// LoadAs is Load as YuniKorn release rel reads and validates the file.
func LoadAs(name string, data []byte, rel release.Version) (*SchedulerConfig, error) {
	f, err := layout.Read(name, data)
	if err != nil {
		return nil, layout.Rekind[configKind](err)
	}
	c, err := layout.Flatten(f.ConfigMaps)
	if err != nil {
		return nil, layout.Rekind[configKind](err)
	}
	return FromLayoutAs(c, rel)
}

// LoadFile reads and loads the queue configuration at path, a regular
// file.
func LoadFile(path string) (*SchedulerConfig, error) {
	data, err := inputfile.ReadFile(path, inputfile.MaxSource)
	if err != nil {
		return nil, fmt.Errorf("read queue configuration: %w", err)
	}
	return Load(path, data)
}

// DefaultConfigName names YuniKorn's built-in configuration in messages.
const DefaultConfigName = "(YuniKorn's default configuration)"

// defaultConfig is configs.DefaultSchedulerConfig: what YuniKorn runs when
// <policyGroup>.yaml is absent or empty (spec §1.2).
const defaultConfig = `partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
    queues:
      - name: root
        submitacl: '*'
`

// FromLayout loads the queue configuration of a flattened key map: the
// value of <policyGroup>.yaml, decoded from its first YAML document as
// YuniKorn does, its errors located in the file (and binaryData key) it
// came from. An absent key or an empty value is YuniKorn's default
// configuration (Default is then set); content without partitions (only
// comments, or partitions: []) is a configuration without partitions,
// which YuniKorn accepts and then rejects every application with.
func FromLayout(c *layout.Config) (*SchedulerConfig, error) {
	return FromLayoutAs(c, release.Default())
}

// FromLayoutAs is FromLayout as YuniKorn release rel reads and validates
// the configuration: a field rel does not know is refused as its strict
// decoder refuses it, and its validator's rules and messages apply.
func FromLayoutAs(c *layout.Config, rel release.Version) (*SchedulerConfig, error) {
	v, ok := c.QueueConfig()
	if !ok || v.Text == "" {
		conf, err := decodeText([]byte(defaultConfig), layout.TextLocator(DefaultConfigName), rel)
		if err != nil {
			return nil, err
		}
		conf.Default, conf.Source = true, DefaultConfigName
		return conf, nil
	}
	conf, err := decodeText([]byte(v.Text), v.Locator(), rel)
	if err != nil {
		return nil, err
	}
	conf.Source = v.Locator().File
	return conf, nil
}

// document is the queues.yaml text to decode, with the way back from its
// positions to the positions in the file that was given.
type document struct {
	content []byte
	root    *yaml.Node // nil for empty content
	loc     layout.Locator
	rel     release.Version
}

func decodeText(content []byte, loc layout.Locator, rel release.Version) (*SchedulerConfig, error) {
	// The text is counted before the YAML library builds its tree, and the
	// tree with its aliases expanded before anything is decoded from it:
	// an inflated value was never part of a source's text.
	if err := yamlbound.Check(loc.File, content, yamlbound.MaxNodes); err != nil {
		return nil, nodeBound(err, loc)
	}
	top, err := pickFirst(content)
	if err != nil {
		return nil, withFile(syntaxError(err, content, loc), loc.File)
	}
	if err := yamlbound.CheckNode(loc.File, top, yamlbound.MaxNodes); err != nil {
		return nil, nodeBound(err, loc)
	}
	conf, err := decode(document{content: content, root: top, loc: loc, rel: rel})
	if err != nil {
		return nil, withFile(err, loc.File)
	}
	return conf, nil
}

// nodeBound is a text over yamlbound's bound, located at the value's start.
func nodeBound(err error, loc layout.Locator) error {
	var e *yamlbound.Error
	if !errors.As(err, &e) {
		return err
	}
	line, col := loc.At(1, 1)
	return withFile(&SourceError{Code: source.CodeTooLarge, Line: line, Column: col, Msg: "the queue configuration has " + e.Reason()}, loc.File)
}

// recoverYAML turns a panic inside the YAML library into an error: bad
// input must give an error, never a crash.
func recoverYAML(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("yaml: %v", r)
	}
}

func documentBody(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		return doc.Content[0]
	}
	return doc
}

// pickFirst parses the first document of an embedded queues.yaml.
func pickFirst(content []byte) (top *yaml.Node, err error) {
	defer recoverYAML(&err)
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(content)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	return documentBody(&doc), nil
}

// decode checks the document against the schema, decodes it strictly as
// YuniKorn does, records source lines and validates.
func decode(doc document) (*SchedulerConfig, error) {
	conf := &SchedulerConfig{Release: doc.rel}
	var idx *sourceIndex
	if doc.root != nil {
		var value any
		idx, value = source.Read[configKind](doc.root, len(doc.content), queuesFormat, doc.loc.At)
		errs := idx.Errs()
		// An alias bomb, or nesting deeper than maxSchemaDepth, does not go
		// through the schema check.
		if idx.Complete() && idx.Depth() <= maxSchemaDepth {
			errs = append(errs, idx.SchemaErrors(value)...)
		}
		errs = append(errs, releaseFieldErrors(idx, value, doc.rel)...)
		if len(errs) > 0 {
			withDecoderPhrases(errs, doc)
			return nil, errs.SortAndCompact().Err()
		}
		// The schema mirrors the Go types, so this decode only fails on
		// what a schema cannot say (e.g. a number too large for uint64).
		// It is kept so that nothing YuniKorn rejects slips through.
		if err := strictDecode(doc, conf); err != nil {
			return nil, err
		}
		fillLines(idx, conf)
	}
	if err := validate(conf, idx); err != nil {
		return nil, err
	}
	conf.Checksum = checksum(doc.content)
	return conf, nil
}

func strictDecode(doc document, conf *SchedulerConfig) (err error) {
	defer recoverYAML(&err)
	dec := yaml.NewDecoder(bytes.NewReader(doc.content))
	dec.KnownFields(true)
	err = dec.Decode(conf)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return syntaxError(err, doc.content, doc.loc)
	}
	var errs SourceErrors
	for _, msg := range te.Errors {
		msg = decoderPhrase(msg)
		e := &SourceError{Code: source.CodeInvalidValue, Msg: msg}
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			e.Line, e.Column = doc.loc.At(line, source.TextColumn(doc.content, line))
			e.Msg = m[2]
		}
		errs = append(errs, e)
	}
	return errs.SortAndCompact().Err()
}

// decoderPhrase words a type error of the strict decode as YuniKorn's
// scheduler logs it: the Go types mirror YuniKorn's configs package, whose
// name the decoder prints.
func decoderPhrase(msg string) string {
	msg = strings.ReplaceAll(msg, "type yunikorn.", "type configs.")
	return strings.ReplaceAll(msg, "into yunikorn.", "into configs.")
}

// withDecoderPhrases adds to each schema error YuniKorn's own words for it
// (field submitACL not found in type configs.QueueConfig, cannot unmarshal
// !!int `-1` into uint64), taken from the strict decode YuniKorn runs, so
// that an operator can match aclc's message with the scheduler's log.
func withDecoderPhrases(errs SourceErrors, doc document) {
	var conf SchedulerConfig
	var list SourceErrors
	var one *SourceError
	switch err := strictDecode(doc, &conf); {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = SourceErrors{one}
	default:
		return
	}
	byLine := map[int][]string{}
	for _, te := range list {
		if te.Line > 0 {
			byLine[te.Line] = append(byLine[te.Line], te.Msg)
		}
	}
	for _, e := range errs {
		phrases := byLine[e.Line]
		if len(phrases) == 0 {
			continue
		}
		// One decoder error per line; a schema error that names the
		// offending key or value takes the phrase that names it too.
		phrase := phrases[0]
		for _, p := range phrases {
			if e.Value != "" && strings.Contains(p, e.Value) {
				phrase = p
				break
			}
		}
		e.Msg += " (YuniKorn: " + phrase + ")"
	}
}

// checksum is YuniKorn's configuration checksum (configs.SetChecksum):
// upper-case hex SHA-256 of the content without its checksum entry. Like
// configs.GetConfigurationString it looks for "checksum:" only in the first
// and last 80 bytes, and keeps the text from "partitions:" on when the
// checksum comes first, or the text before the checksum otherwise.
func checksum(content []byte) string {
	return fmt.Sprintf("%X", sha256.Sum256(withoutChecksum(content)))
}

func withoutChecksum(content []byte) []byte {
	const window = 80
	if len(content) == 0 {
		return nil
	}
	key := []byte("checksum:")
	at := bytes.Index(content[:min(window, len(content))], key)
	if at < 0 {
		tail := max(len(content)-window, 0)
		if i := bytes.Index(content[tail:], key); i >= 0 {
			at = tail + i
		}
	}
	if at < 0 {
		return content
	}
	partitions := bytes.Index(content, []byte("partitions:"))
	switch {
	case partitions < 0:
		return nil
	case at < partitions:
		return content[partitions:]
	}
	return content[:at]
}

// yamlLineRE splits the line off a YAML error or type error message.
var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// readerErrorRE matches the YAML reader's errors about bad characters,
// which carry no position at all.
var readerErrorRE = regexp.MustCompile(`(?i)utf-8|octet|unicode|control characters`)

// syntaxError locates a YAML syntax error. The YAML library gives a line
// only, and none for an error on the first line or for a bad character.
func syntaxError(err error, content []byte, loc layout.Locator) *SourceError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line, column := 1, 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else if readerErrorRE.MatchString(msg) {
		line, column = 0, 0
		if l, c, ok := badCharacter(content); ok {
			line, column = l, c
		}
	}
	if column == 0 {
		// The library knows no column: the text of the line it names.
		column = source.TextColumn(content, line)
	}
	e := &SourceError{Code: source.CodeYAMLSyntax, Msg: msg}
	e.Line, e.Column = loc.At(line, column)
	if strings.Contains(msg, "did not find expected alphabetic or numeric character") {
		lines := strings.Split(string(content), "\n")
		if line >= 1 && line <= len(lines) && strings.Contains(lines[line-1], "*") {
			e.Value = "*"
			e.Msg += `; an unquoted * starts a YAML alias: quote the wildcard ACL as "*"`
		}
	}
	return e
}

// badCharacter finds the first byte sequence YAML refuses to read: invalid
// UTF-8 or a control character.
func badCharacter(content []byte) (line, column int, ok bool) {
	line, column = 1, 1
	for len(content) > 0 {
		r, size := utf8.DecodeRune(content)
		if (r == utf8.RuneError && size == 1) || !yamlPrintable(r) {
			return line, column, true
		}
		if r == '\n' {
			line, column = line+1, 1
		} else {
			column++
		}
		content = content[size:]
	}
	return 0, 0, false
}

// yamlPrintable is YAML 1.2's c-printable set.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7E:
		return true
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// configSchema is the schema of queues.yaml, by its name in package schemas.
const configSchema = "yunikorn/queues/config.json"

// queuesFormat is how queues.yaml is read for its schema check: as yaml.v3
// decodes it for YuniKorn, into typed values with merge keys.
var queuesFormat = source.Format{
	Schema:  configSchema,
	KeyHint: "keys are case-sensitive lower case",
	Accepts: decoderAccepts,
}

// sourceIndex maps JSON pointers into the decoded document to the YAML nodes
// they came from. The pointers are those of JSON Schema instance locations,
// and the validator builds the same ones as it walks the configuration.
type sourceIndex = source.Index[configKind]

// maxSchemaDepth bounds the nesting that goes through the schema check. The
// schema library's error paths cost the cube of the depth, so a deeply
// nested invalid document would take minutes; such a document (some 30
// levels of queues) is left to the strict decode and the validator, which
// accept exactly what YuniKorn accepts.
const maxSchemaDepth = 64

// fillLines records the source positions the queue tree reports with.
func fillLines(x *sourceIndex, conf *SchedulerConfig) {
	for i := range conf.Partitions {
		at := "/partitions/" + strconv.Itoa(i)
		p := &conf.Partitions[i]
		p.Line, p.Column = x.EntryPos(at)
		fillQueueLines(x, p.Queues, at+"/queues")
		for j := range p.PlacementRules {
			fillRuleLines(x, &p.PlacementRules[j], at+"/placementrules/"+strconv.Itoa(j))
		}
	}
}

// fillRuleLines records where a placement rule, its filter and its parents
// are written.
func fillRuleLines(x *sourceIndex, r *PlacementRule, at string) {
	for ; r != nil; r, at = r.Parent, at+"/parent" {
		r.Line, r.Column = x.EntryPos(at)
		if l, c, ok := x.KeyPos(at + "/filter"); ok {
			r.Filter.Line, r.Filter.Column = l, c
		}
	}
}

func fillQueueLines(x *sourceIndex, queues []QueueConfig, at string) {
	for i := range queues {
		q := &queues[i]
		qAt := at + "/" + strconv.Itoa(i)
		q.Line, q.Column = x.EntryPos(qAt)
		q.AdminACLLine, q.AdminACLColumn = x.EntryPos(qAt + "/adminacl")
		q.SubmitACLLine, q.SubmitACLColumn = x.EntryPos(qAt + "/submitacl")
		fillQueueLines(x, q.Queues, qAt+"/queues")
	}
}

// yaml11Bools are the YAML 1.1 booleans that yaml.v3 still decodes into a
// bool field.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true, "off": true, "Off": true, "OFF": true,
}

// decoderAccepts reports whether yaml.v3, which YuniKorn decodes with,
// accepts the node for the schema's types although the JSON type differs:
// null leaves the zero value, any scalar fills a string, and the YAML 1.1
// words fill a bool. The schema says what is meant; this keeps aclc from
// rejecting what YuniKorn takes.
func decoderAccepts(node *yaml.Node, types []string) bool {
	n := source.ResolveAlias(node)
	if n == nil {
		return false
	}
	if isNull(n) {
		return true
	}
	if n.Kind != yaml.ScalarNode {
		return false
	}
	for _, t := range types {
		switch t {
		case "string":
			return true
		case "boolean":
			if n.ShortTag() == "!!str" && yaml11Bools[n.Value] {
				return true
			}
		}
	}
	return false
}

// releaseField is a partition field that older releases' strict decoder
// does not know: a configuration that sets it, even to nothing, fails to
// parse there.
type releaseField struct {
	sw       release.Switch
	at       string // below the partition: "usergroupresolver", "preemption/quotapreemptionenabled"
	key, typ string // the key and the Go type yaml.v3 names in its error
}

var releaseFields = []releaseField{
	{release.NoUserGroupResolverField, "usergroupresolver", "usergroupresolver", "configs.PartitionConfig"},
	{release.NoQuotaPreemptionField, "preemption/quotapreemptionenabled", "quotapreemptionenabled", "configs.PartitionPreemptionConfig"},
}

// firstWithout names the first release without the switch, "1.8.0 and
// later".
func firstWithout(sw release.Switch) string {
	for _, name := range release.Known() {
		if r, _ := release.Lookup(name); !r.Has(sw) {
			if name == release.Snapshot {
				return "the snapshot"
			}
			return "YuniKorn " + name + " and later"
		}
	}
	return ""
}

// releaseFieldErrors refuses the fields rel's decoder does not know, with
// yaml.v3's words for an unknown field, located at the key.
func releaseFieldErrors(idx *sourceIndex, value any, rel release.Version) SourceErrors {
	top, _ := value.(map[string]any)
	partitions, _ := top["partitions"].([]any)
	var errs SourceErrors
	for i := range partitions {
		for _, f := range releaseFields {
			if !rel.Has(f.sw) {
				continue
			}
			ptr := "/partitions/" + strconv.Itoa(i) + "/" + f.at
			if idx.Node(ptr) == nil {
				continue
			}
			errs = append(errs, idx.AtKey(source.CodeUnknownKey, ptr, f.key,
				fmt.Sprintf("unknown key %q: YuniKorn %s does not know it, %s read it (YuniKorn: field %s not found in type %s)", f.key, rel, firstWithout(f.sw), f.key, f.typ)))
		}
	}
	return errs
}
