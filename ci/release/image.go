package release

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/daemon/env"
)

// Where bundle files land in the image.
const (
	ImageBinDir   = "/usr/local/bin"
	ImageShareDir = "/usr/share"
	// DaemonBinary is the image's entrypoint when the bundle has it.
	DaemonBinary = "cuzk-daemon"
	// KernelManifest is where the kernel manifest sits in a bundle.
	KernelManifest = "share/cuzk/manifest.json"
)

// ImageUser is the user the image runs as: distroless's nonroot.
var ImageUser = fmt.Sprintf("%d:%d", debian.NonrootUID, debian.NonrootUID)

// The daemon image's serving defaults: the daemon's own ports (its
// default listen addresses are 127.0.0.1 on them), on all interfaces so
// that a runtime can publish them, and the key directory as a volume.
const (
	// ImageGRPCPort serves gRPC; ImageHTTPPort /metrics, /healthz, /readyz.
	ImageGRPCPort = 9820
	ImageHTTPPort = 9821
	// ImageKeyDir is the key directory, declared a volume, owned by
	// ImageUser (created in the base layer: debian.KeyDir).
	ImageKeyDir = debian.KeyDir
	// ImageCmd is the default command after the daemon entrypoint.
	ImageCmd = "serve"
)

// ImageEnv is the daemon image's environment. The NVIDIA container toolkit
// reads the NVIDIA_* variables to inject the driver (libcuda) at run time;
// the CUDA base images set the same values. The CUZK_DAEMON_* variables
// are serve's container defaults: every interface (so serve refuses to
// start without a token: CUZK_DAEMON_TOKEN or CUZK_DAEMON_TOKEN_FILE) and
// the key volume, the one place it writes (the root can be read-only).
var ImageEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"SSL_CERT_FILE=" + debian.CABundle,
	"NVIDIA_VISIBLE_DEVICES=all",
	"NVIDIA_DRIVER_CAPABILITIES=compute,utility",
	env.Var("listen") + "=:" + strconv.Itoa(ImageGRPCPort),
	env.Var("http_listen") + "=:" + strconv.Itoa(ImageHTTPPort),
	env.Var("key_dir") + "=" + ImageKeyDir,
}

// OCI annotation keys ci/oci does not name.
const (
	labelSource      = "org.opencontainers.image.source"
	labelLicenses    = "org.opencontainers.image.licenses"
	labelDescription = "org.opencontainers.image.description"
)

// ImageLabels returns the daemon image's config labels (also its manifest
// annotations): title, description, version, licenses, created (the
// release epoch, not the clock), source (the repository; DefaultRepository
// when "") and revision (the source commit, left out when unknown).
func ImageLabels(version, commit, repository string, created time.Time) map[string]string {
	if repository == "" {
		repository = DefaultRepository
	}
	l := map[string]string{oci.AnnotationTitle: "cuzk", labelDescription: "cuzk: a GPU Groth16 proving daemon",
		oci.AnnotationVersion: version, labelLicenses: License, labelSource: repository,
		oci.AnnotationCreated: created.UTC().Format(time.RFC3339)}
	if commit != "" {
		l[oci.AnnotationRevision] = commit
	}
	return l
}

// Base is the image's base layer: the unpacked pinned Debian packages.
type Base struct {
	// Packages are the pins the entries came from (for history and SBOM).
	Packages []debian.Package
	// Entries are the layer's contents (debian.Rootfs).
	Entries []oci.Entry
}

// imagePath returns where a bundle file lands in the image: bin/* in
// /usr/local/bin, share/* in /usr/share, the licence files in
// /usr/share/doc/cuzk; ok is false for the rest (the bundle's SHA256SUMS).
func imagePath(rel string) (string, bool) {
	switch {
	case strings.HasPrefix(rel, "bin/"):
		return ImageBinDir + strings.TrimPrefix(rel, "bin"), true
	case strings.HasPrefix(rel, "share/"):
		return ImageShareDir + strings.TrimPrefix(rel, "share"), true
	case slices.Contains(LicenseFiles, rel):
		return ImageShareDir + "/doc/cuzk/" + rel, true
	}
	return "", false
}

// Image returns the OCI image of b on base: the base layer, then a payload
// layer with the bundle's files where imagePath puts them. cuzk-daemon
// (or the only binary) is the entrypoint, run as nonroot (65532); with
// cuzk-daemon the default command is ImageCmd. The bundle's own SHA256SUMS
// stays out of the image; the layer digests cover the files. The exposed
// ports and the volume, which oci.Image does not carry, are added by
// WriteImage (serveConfig).
func (b Bundle) Image(base Base) (oci.Image, error) {
	names := make([]string, len(base.Packages))
	for i, p := range base.Packages {
		names[i] = p.Name + "=" + p.Version
	}
	img := oci.Image{
		Created:      b.Options.Epoch,
		OS:           b.Options.GOOS,
		Architecture: b.Options.GOARCH,
		WorkingDir:   "/",
		User:         ImageUser,
		Env:          slices.Clone(ImageEnv),
		Labels:       ImageLabels(b.Options.Version, b.Commit, b.Repository, b.Options.Epoch),
		Annotations:  ImageLabels(b.Options.Version, b.Commit, b.Repository, b.Options.Epoch),
		Layers: []oci.LayerSpec{{Entries: base.Entries, CreatedBy: "cuzk base: Debian 12 " + strings.Join(names, " "),
			Comment: "pinned in toolchain/toolchain.yaml base_packages"}},
	}
	payload := oci.LayerSpec{CreatedBy: "cuzk release " + b.Options.Version}
	var bins []string
	for _, f := range b.Files {
		if p, ok := imagePath(f.Path); ok {
			payload.Entries = append(payload.Entries, oci.Entry{Path: p, Kind: oci.KindFile, Mode: f.Mode, Data: f.Data})
		}
		if bin, ok := strings.CutPrefix(f.Path, "bin/"); ok {
			bins = append(bins, bin)
		}
	}
	slices.SortFunc(payload.Entries, func(x, y oci.Entry) int { return strings.Compare(x.Path, y.Path) })
	img.Layers = append(img.Layers, payload)
	switch {
	case slices.Contains(bins, DaemonBinary):
		img.Entrypoint, img.Cmd = []string{ImageBinDir + "/" + DaemonBinary}, []string{ImageCmd}
	case len(bins) == 1:
		img.Entrypoint = []string{ImageBinDir + "/" + bins[0]}
	default:
		return oci.Image{}, fmt.Errorf("release image: no %s among binaries %v", DaemonBinary, bins)
	}
	return img, img.Validate()
}

// WriteImage assembles b's image on base and writes it as an OCI layout
// into dir (absent or empty), verified, tagged with the release version.
// It returns the manifest descriptor.
func (b Bundle) WriteImage(dir string, base Base) (v1.Descriptor, error) {
	spec, err := b.Image(base)
	if err != nil {
		return v1.Descriptor{}, err
	}
	img, err := oci.Build(spec)
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("release image: %w", err)
	}
	if slices.Equal(spec.Cmd, []string{ImageCmd}) {
		if img, err = serveConfig(img); err != nil {
			return v1.Descriptor{}, fmt.Errorf("release image: %w", err)
		}
	}
	d, err := oci.WriteLayout(dir, img, spec.Platform(), b.Options.Version)
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("release image: %w", err)
	}
	return d, nil
}

// serveConfig adds what serving needs to img's config: ExposedPorts
// ImageGRPCPort and ImageHTTPPort, and ImageKeyDir as a Volume. The
// manifest's annotations and the layers stay as they are.
func serveConfig(img v1.Image) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("serve config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Config.ExposedPorts = map[string]struct{}{}
	for _, p := range []int{ImageGRPCPort, ImageHTTPPort} {
		cf.Config.ExposedPorts[strconv.Itoa(p)+"/tcp"] = struct{}{}
	}
	cf.Config.Volumes = map[string]struct{}{ImageKeyDir: {}}
	out, err := mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("serve config: %w", err)
	}
	return out, nil
}
