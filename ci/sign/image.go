package sign

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// cosign's names for an image signature (its "simple signing" payload and
// the annotations on the signature manifest's layer).
const (
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	SimpleSigningType      = "cosign container image signature"
	AnnotationSignature    = "dev.cosignproject.cosign/signature"
	AnnotationCertificate  = "dev.sigstore.cosign/certificate"
	AnnotationChain        = "dev.sigstore.cosign/chain"
	AnnotationBundle       = "dev.sigstore.cosign/bundle"
	// annotationRefName tags a manifest in an OCI layout's index.
	annotationRefName = "org.opencontainers.image.ref.name"
	// bundleV01 is the media type of a bundle rebuilt from annotations:
	// cosign's Rekor bundle carries an inclusion promise and no proof.
	bundleV01 = "application/vnd.dev.sigstore.bundle+json;version=0.1"
)

// SimpleSigning is cosign's signed payload for an image.
type SimpleSigning struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]any `json:"optional"`
}

// SimpleSigningPayload is the payload cosign signs for the image manifest
// digest in repository repo ("ghcr.io/cuzk-dev/cuzk").
func SimpleSigningPayload(repo string, digest v1.Hash) ([]byte, error) {
	var p SimpleSigning
	p.Critical.Identity.DockerReference = repo
	p.Critical.Image.DockerManifestDigest = digest.String()
	p.Critical.Type = SimpleSigningType
	out, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("sign image: payload: %w", err)
	}
	return out, nil
}

// SignatureTag is where cosign looks for an image's signatures: the tag
// "sha256-<hex>.sig" in the image's repository.
func SignatureTag(digest v1.Hash) string { return digest.Algorithm + "-" + digest.Hex + ".sig" }

// SignImage signs the image manifest digest as cosign does and returns the
// signature manifest: one layer, the simple-signing payload, annotated with
// the signature and, keyless, the certificate and the Rekor bundle. Store
// it under SignatureTag(digest) beside the image.
func (s *Signer) SignImage(ctx context.Context, repo string, digest v1.Hash) (v1.Image, error) {
	payload, err := SimpleSigningPayload(repo, digest)
	if err != nil {
		return nil, err
	}
	b, err := s.SignBlob(ctx, payload)
	if err != nil {
		return nil, fmt.Errorf("sign image %s: %w", digest, err)
	}
	ann, err := cosignAnnotations(b)
	if err != nil {
		return nil, fmt.Errorf("sign image %s: %w", digest, err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(payload, SimpleSigningMediaType), Annotations: ann})
	if err != nil {
		return nil, fmt.Errorf("sign image %s: %w", digest, err)
	}
	return img, nil
}

// rekorBundle is cosign's dev.sigstore.cosign/bundle annotation.
type rekorBundle struct {
	SignedEntryTimestamp []byte `json:"SignedEntryTimestamp"`
	Payload              struct {
		Body           string `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"`
	} `json:"Payload"`
}

func cosignAnnotations(b *protobundle.Bundle) (map[string]string, error) {
	ms := b.GetMessageSignature()
	if ms == nil {
		return nil, errors.New("no message signature")
	}
	ann := map[string]string{AnnotationSignature: base64.StdEncoding.EncodeToString(ms.GetSignature())}
	if c := b.GetVerificationMaterial().GetCertificate(); c != nil {
		ann[AnnotationCertificate] = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.GetRawBytes()}))
		ann[AnnotationChain] = "" // Fulcio's chain comes from the trusted root
	}
	for _, e := range b.GetVerificationMaterial().GetTlogEntries() {
		var rb rekorBundle
		rb.SignedEntryTimestamp = e.GetInclusionPromise().GetSignedEntryTimestamp()
		rb.Payload.Body = base64.StdEncoding.EncodeToString(e.GetCanonicalizedBody())
		rb.Payload.IntegratedTime, rb.Payload.LogIndex = e.GetIntegratedTime(), e.GetLogIndex()
		rb.Payload.LogID = hex.EncodeToString(e.GetLogId().GetKeyId())
		raw, err := json.Marshal(rb)
		if err != nil {
			return nil, err
		}
		ann[AnnotationBundle] = string(raw)
		break // cosign records one entry
	}
	if ann[AnnotationChain] == "" {
		delete(ann, AnnotationChain)
	}
	return ann, nil
}

// WriteSignatureLayout writes the signature manifest sig of the image
// digest into dir (absent or empty) as an OCI layout whose one manifest is
// tagged SignatureTag(digest): `crane push dir REPO:TAG` or `skopeo copy
// oci:dir:TAG docker://REPO:TAG` puts it where cosign looks.
func WriteSignatureLayout(dir string, sig v1.Image, digest v1.Hash) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("write image signature: %s is not empty", dir)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write image signature %s: %w", dir, err)
	}
	if err := p.AppendImage(sig, layout.WithAnnotations(map[string]string{annotationRefName: SignatureTag(digest)})); err != nil {
		return fmt.Errorf("write image signature %s: %w", dir, err)
	}
	return nil
}

// ReadSignatureLayout reads the signature manifest of digest from an OCI
// layout written by WriteSignatureLayout; ErrNoSignature when dir or the
// tag is absent.
func ReadSignatureLayout(dir string, digest v1.Hash) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoSignature, dir)
		}
		return nil, fmt.Errorf("read image signature %s: %w", dir, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read image signature %s: %w", dir, err)
	}
	for _, d := range im.Manifests {
		if d.Annotations[annotationRefName] == SignatureTag(digest) {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("%w: %s has no manifest tagged %s", ErrNoSignature, dir, SignatureTag(digest))
}

// PushSignature uploads sig to repo under SignatureTag(digest), where
// `cosign verify REPO@DIGEST` finds it.
func PushSignature(ctx context.Context, sig v1.Image, repo string, digest v1.Hash, opts ...remote.Option) (name.Tag, error) {
	r, err := name.NewRepository(repo)
	if err != nil {
		return name.Tag{}, fmt.Errorf("push image signature: %w", err)
	}
	tag := r.Tag(SignatureTag(digest))
	if err := remote.Write(tag, sig, append([]remote.Option{remote.WithContext(ctx)}, opts...)...); err != nil {
		return name.Tag{}, fmt.Errorf("push image signature %s: %w", tag, err)
	}
	return tag, nil
}

// VerifyImage checks a cosign signature manifest for the image digest: a
// layer whose simple-signing payload names digest and whose signature (with
// its certificate and Rekor bundle, keyless) verifies. One good layer
// suffices, as for cosign; the payload of that layer is returned.
func (v *Verifier) VerifyImage(sig v1.Image, digest v1.Hash) (SimpleSigning, error) {
	layers, err := sig.Layers()
	if err != nil {
		return SimpleSigning{}, fmt.Errorf("%w: signature manifest: %w", ErrBadSignature, err)
	}
	m, err := sig.Manifest()
	if err != nil {
		return SimpleSigning{}, fmt.Errorf("%w: signature manifest: %w", ErrBadSignature, err)
	}
	var errs []error
	for i, l := range layers {
		if m.Layers[i].MediaType != SimpleSigningMediaType {
			continue
		}
		p, err := v.verifyImageLayer(l, m.Layers[i].Annotations, digest)
		if err == nil {
			return p, nil
		}
		errs = append(errs, fmt.Errorf("layer %d: %w", i+1, err))
	}
	if len(errs) == 0 {
		return SimpleSigning{}, fmt.Errorf("%w: the signature manifest has no %s layer", ErrNoSignature, SimpleSigningMediaType)
	}
	return SimpleSigning{}, errors.Join(errs...)
}

func (v *Verifier) verifyImageLayer(l v1.Layer, ann map[string]string, digest v1.Hash) (SimpleSigning, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return SimpleSigning{}, fmt.Errorf("%w: payload: %w", ErrBadSignature, err)
	}
	payload, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	rc.Close()
	if err != nil {
		return SimpleSigning{}, fmt.Errorf("%w: payload: %w", ErrBadSignature, err)
	}
	var p SimpleSigning
	if err := json.Unmarshal(payload, &p); err != nil {
		return p, fmt.Errorf("%w: payload: %w", ErrBadSignature, err)
	}
	if p.Critical.Type != SimpleSigningType {
		return p, fmt.Errorf("%w: payload type %q, want %q", ErrBadSignature, p.Critical.Type, SimpleSigningType)
	}
	if got := p.Critical.Image.DockerManifestDigest; got != digest.String() {
		return p, fmt.Errorf("%w: the payload signs manifest %s, the image is %s", ErrBadSignature, got, digest)
	}
	b, err := bundleFromAnnotations(payload, ann)
	if err != nil {
		return p, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	if _, err := v.verify(b, verify.WithArtifact(bytes.NewReader(payload))); err != nil {
		return p, err
	}
	return p, nil
}

// bundleFromAnnotations rebuilds the Sigstore bundle cosign's annotations
// carry: the signature over payload, the certificate or a key, and the
// Rekor entry with its inclusion promise.
func bundleFromAnnotations(payload []byte, ann map[string]string) (*bundle.Bundle, error) {
	sig, err := base64.StdEncoding.DecodeString(ann[AnnotationSignature])
	if err != nil || len(sig) == 0 {
		return nil, fmt.Errorf("annotation %s: not a base64 signature", AnnotationSignature)
	}
	sum := sha256.Sum256(payload)
	pb := &protobundle.Bundle{MediaType: bundleV01,
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]}, Signature: sig}},
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{}}}}
	if c := ann[AnnotationCertificate]; c != "" {
		blk, _ := pem.Decode([]byte(c))
		if blk == nil || blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("annotation %s: no PEM certificate", AnnotationCertificate)
		}
		pb.VerificationMaterial.Content = &protobundle.VerificationMaterial_X509CertificateChain{
			X509CertificateChain: &protocommon.X509CertificateChain{Certificates: []*protocommon.X509Certificate{{RawBytes: blk.Bytes}}}}
	}
	if raw := ann[AnnotationBundle]; raw != "" {
		e, err := tlogEntryFromRekorBundle([]byte(raw))
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", AnnotationBundle, err)
		}
		pb.VerificationMaterial.TlogEntries = []*protorekor.TransparencyLogEntry{e}
	}
	return bundle.NewBundle(pb)
}

func tlogEntryFromRekorBundle(raw []byte) (*protorekor.TransparencyLogEntry, error) {
	var rb rekorBundle
	if err := json.Unmarshal(raw, &rb); err != nil {
		return nil, err
	}
	body, err := base64.StdEncoding.DecodeString(rb.Payload.Body)
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	logID, err := hex.DecodeString(rb.Payload.LogID)
	if err != nil {
		return nil, fmt.Errorf("logID: %w", err)
	}
	var kv struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(body, &kv); err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	return &protorekor.TransparencyLogEntry{LogIndex: rb.Payload.LogIndex, LogId: &protocommon.LogId{KeyId: logID},
		KindVersion: &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion}, IntegratedTime: rb.Payload.IntegratedTime,
		InclusionPromise: &protorekor.InclusionPromise{SignedEntryTimestamp: rb.SignedEntryTimestamp}, CanonicalizedBody: body}, nil
}
