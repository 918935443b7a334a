package release

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// spdxSchema is the official SPDX 2.3 JSON schema; testdata/spdx-2.3-schema.md
// names its source and hash.
//
//go:embed testdata/spdx-2.3-schema.json
var spdxSchema []byte

// spdxSchemaURL is the schema's $id.
const spdxSchemaURL = "http://spdx.org/rdf/terms/2.3"

// compiledSchema compiles spdxSchema once per process; the compiled schema
// is immutable and safe for concurrent validation.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spdxSchema))
	if err != nil {
		return nil, fmt.Errorf("spdx schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // as ajv with ajv-formats would, should a later schema declare formats
	if err := c.AddResource(spdxSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("spdx schema: %w", err)
	}
	return c.Compile(spdxSchemaURL)
})

// ValidateSBOM checks an SPDX 2.3 JSON document against the official
// schema. The error lists every violation by its JSON pointer, with the
// SPDXID of the package or file it sits in ("/packages/3
// (SPDXRef-Deb-libc6)/primaryPackagePurpose: value must be one of ...").
// It is safe for concurrent use.
func ValidateSBOM(doc []byte) error {
	sch, err := compiledSchema()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("spdx schema: not JSON: %w", err)
	}
	err = sch.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return err
	}
	var raw struct {
		Packages []struct {
			ID string `json:"SPDXID"`
		} `json:"packages"`
		Files []struct {
			ID string `json:"SPDXID"`
		} `json:"files"`
	}
	_ = json.Unmarshal(doc, &raw) // best effort: ids only make the message clearer
	ids := map[string]string{}
	for i, p := range raw.Packages {
		ids["packages/"+strconv.Itoa(i)] = p.ID
	}
	for i, f := range raw.Files {
		ids["files/"+strconv.Itoa(i)] = f.ID
	}
	var msgs []string
	for _, leaf := range leaves(ve) {
		msgs = append(msgs, pointer(leaf.InstanceLocation, ids)+": "+leaf.BasicOutput().Error.String())
	}
	sort.Strings(msgs)
	msgs = slices.Compact(msgs)
	return fmt.Errorf("spdx 2.3 schema: %d violation(s):\n  %s", len(msgs), strings.Join(msgs, "\n  "))
}

// leaves returns the errors of e's tree that have no causes.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// pointer renders a JSON pointer, naming the element an array index is.
func pointer(loc []string, ids map[string]string) string {
	var sb strings.Builder
	for i, tok := range loc {
		sb.WriteString("/" + tok)
		if i == 1 {
			if id := ids[loc[0]+"/"+tok]; id != "" {
				sb.WriteString(" (" + id + ")")
			}
		}
	}
	if sb.Len() == 0 {
		return "/"
	}
	return sb.String()
}
