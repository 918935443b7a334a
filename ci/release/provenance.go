package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// Provenance identifiers.
const (
	// PredicateSLSA is the SLSA provenance v1 predicate type.
	PredicateSLSA = "https://slsa.dev/provenance/v1"
	// BuildType names how a cuzk release is built (pinned Go, pinned
	// nvcc, `go run mage.go release`); its parameters are in the predicate.
	BuildType = "https://github.com/cuzk-dev/cuzk/ci/release/v1"
	// BuilderID names the builder: the release target, the same natively
	// and inside the pinned build image (so both give the same bytes).
	BuilderID = "https://github.com/cuzk-dev/cuzk/magefiles/release.go#Release"
	// ImageSubject is the provenance subject name of the OCI image (its
	// directory in dist/); its digest is the manifest's.
	ImageSubject = "image"
)

// Subjects returns the provenance subjects: the archive, each binary (named
// by its bundle path) and the image manifest, with sha256 digests.
func (b Bundle) Subjects(f Facts) []*intoto.ResourceDescriptor {
	subs := []*intoto.ResourceDescriptor{{Name: b.Options.Name() + ".tar.gz", Digest: map[string]string{"sha256": b.ArchiveSHA256}}}
	for _, file := range b.Files {
		if strings.HasPrefix(file.Path, "bin/") {
			subs = append(subs, &intoto.ResourceDescriptor{Name: file.Path, Digest: map[string]string{"sha256": sha256Hex(file.Data)}})
		}
	}
	return append(subs, &intoto.ResourceDescriptor{Name: ImageSubject, MediaType: string(f.Image.MediaType),
		Digest: map[string]string{f.Image.Digest.Algorithm: f.Image.Digest.Hex}})
}

// Provenance returns an in-toto Statement v1 with a SLSA provenance v1
// predicate as canonical JSON (sorted keys, two-space indent): subjects as
// Subjects, the source commit and version as external parameters, the
// pins as internal parameters, and the kernels (ActionID annotations) and
// Debian packages as resolved dependencies. It carries no wall-clock time,
// so a rebuild gives the same bytes.
func (b Bundle) Provenance(f Facts) ([]byte, error) {
	ext, err := structpb.NewStruct(map[string]any{
		"version": b.Options.Version, "source": f.sourceLocation(), "commit": f.Commit,
		"source_date_epoch": b.Options.Epoch.Unix(), "platform": b.Options.GOOS + "/" + b.Options.GOARCH,
	})
	if err != nil {
		return nil, fmt.Errorf("release provenance: external parameters: %w", err)
	}
	internal := map[string]any{"toolchain_identity": f.Manifest.Toolchain, "nvcc_build": f.Manifest.NvccBuild,
		"kernel_image": f.Manifest.Image, "go_env": strings.Join(b.Options.PinnedEnv(), " ")}
	for k, v := range f.Pins {
		internal["pin "+k] = v
	}
	in, err := structpb.NewStruct(internal)
	if err != nil {
		return nil, fmt.Errorf("release provenance: internal parameters: %w", err)
	}
	var deps []*intoto.ResourceDescriptor
	if f.Commit != "" {
		deps = append(deps, &intoto.ResourceDescriptor{Uri: f.sourceLocation(), Digest: map[string]string{"gitCommit": f.Commit}})
	}
	for _, k := range f.Manifest.Kernels {
		ann, err := structpb.NewStruct(map[string]any{"action_id": k.ActionID, "closure_hash": k.ClosureHash, "source": k.Source})
		if err != nil {
			return nil, fmt.Errorf("release provenance: kernel %s: %w", k.Name, err)
		}
		deps = append(deps, &intoto.ResourceDescriptor{Name: "kernel " + k.Name, Uri: "cuda/fatbin/" + k.Name + ".fatbin",
			Digest: map[string]string{"sha256": k.FatbinSHA256}, Annotations: ann})
	}
	for _, p := range f.Base {
		deps = append(deps, &intoto.ResourceDescriptor{Name: p.FileName(),
			Uri: "pkg:deb/debian/" + p.Name + "@" + p.Version + "?arch=" + p.Arch, Digest: map[string]string{"sha256": p.SHA256}})
	}
	pred := &slsa.Provenance{
		BuildDefinition: &slsa.BuildDefinition{BuildType: BuildType, ExternalParameters: ext, InternalParameters: in,
			ResolvedDependencies: deps},
		RunDetails: &slsa.RunDetails{Builder: &slsa.Builder{Id: BuilderID}},
	}
	if err := pred.Validate(); err != nil {
		return nil, fmt.Errorf("release provenance: %w", err)
	}
	predStruct, err := toStruct(pred)
	if err != nil {
		return nil, fmt.Errorf("release provenance: predicate: %w", err)
	}
	st := &intoto.Statement{Type: intoto.StatementTypeUri, Subject: b.Subjects(f), PredicateType: PredicateSLSA, Predicate: predStruct}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("release provenance: statement: %w", err)
	}
	return canonicalJSON(st)
}

// toStruct converts a proto message to a structpb.Struct via its JSON form.
func toStruct(m proto.Message) (*structpb.Struct, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	return s, protojson.Unmarshal(b, s)
}

// canonicalJSON renders m through encoding/json: protojson's own output
// varies its whitespace on purpose, and release files must be stable.
func canonicalJSON(m proto.Message) ([]byte, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("release provenance: encode: %w", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("release provenance: encode: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("release provenance: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// ReadStatement parses a provenance file written by Provenance.
func ReadStatement(b []byte) (*intoto.Statement, *slsa.Provenance, error) {
	st := &intoto.Statement{}
	if err := protojson.Unmarshal(b, st); err != nil {
		return nil, nil, fmt.Errorf("read provenance: %w", err)
	}
	if err := st.Validate(); err != nil {
		return nil, nil, fmt.Errorf("read provenance: %w", err)
	}
	if st.GetPredicateType() != PredicateSLSA {
		return nil, nil, fmt.Errorf("read provenance: predicate type %q, want %q", st.GetPredicateType(), PredicateSLSA)
	}
	raw, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return nil, nil, fmt.Errorf("read provenance: predicate: %w", err)
	}
	pred := &slsa.Provenance{}
	if err := protojson.Unmarshal(raw, pred); err != nil {
		return nil, nil, fmt.Errorf("read provenance: predicate: %w", err)
	}
	return st, pred, nil
}

// SignedProvenance returns the statement a release's DSSE bundle signs:
// the provenance raw (as Provenance wrote it) with the builder id set to
// builderID, canonical JSON. Signing keyless, builderID is the
// certificate's identity (the release workflow at its tag), so the
// builder a verifier reads is the one Fulcio certified; with a key it
// stays BuilderID. The unsigned provenance file keeps BuilderID, so that a
// rebuild anywhere reproduces it byte for byte.
func SignedProvenance(raw []byte, builderID string) ([]byte, error) {
	st, pred, err := ReadStatement(raw)
	if err != nil {
		return nil, err
	}
	if builderID == "" {
		return nil, fmt.Errorf("release provenance: empty builder id")
	}
	pred.RunDetails.Builder.Id = builderID
	if err := pred.Validate(); err != nil {
		return nil, fmt.Errorf("release provenance: %w", err)
	}
	if st.Predicate, err = toStruct(pred); err != nil {
		return nil, fmt.Errorf("release provenance: predicate: %w", err)
	}
	return canonicalJSON(st)
}

// CheckSignedProvenance compares the statement a DSSE bundle signed with
// the release's provenance file: the same subjects and build definition,
// and the builder id builderID. It names the first field that differs.
func CheckSignedProvenance(signed, file []byte, builderID string) error {
	sst, spred, err := ReadStatement(signed)
	if err != nil {
		return fmt.Errorf("signed statement: %w", err)
	}
	fst, fpred, err := ReadStatement(file)
	if err != nil {
		return err
	}
	if len(sst.GetSubject()) != len(fst.GetSubject()) {
		return fmt.Errorf("signed statement: %d subjects, the file has %d", len(sst.GetSubject()), len(fst.GetSubject()))
	}
	for i, s := range sst.GetSubject() {
		if !proto.Equal(s, fst.GetSubject()[i]) {
			return fmt.Errorf("signed statement: subject %d (%s) differs from the file's (%s)", i+1, s.GetName(), fst.GetSubject()[i].GetName())
		}
	}
	if !proto.Equal(spred.GetBuildDefinition(), fpred.GetBuildDefinition()) {
		return errors.New("signed statement: predicate.buildDefinition differs from the file's")
	}
	if got := spred.GetRunDetails().GetBuilder().GetId(); got != builderID {
		return fmt.Errorf("signed statement: predicate.runDetails.builder.id %q, want %q (the signer's identity)", got, builderID)
	}
	return nil
}
