package release

import (
	"fmt"
	"strings"

	"github.com/cuzk-dev/cuzk/ci/oci"
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

// ImageEnv is the daemon image's environment. The NVIDIA container toolkit
// reads the NVIDIA_* variables to inject the driver; the CUDA base images set
// the same values.
var ImageEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"NVIDIA_VISIBLE_DEVICES=all",
	"NVIDIA_DRIVER_CAPABILITIES=compute,utility",
}

// ImageLabels returns the daemon image's own labels for a release version
// (the base image labels are added by oci and by the Dagger pipeline).
func ImageLabels(version string) map[string]string {
	return map[string]string{oci.AnnotationTitle: "cuzk", oci.AnnotationVersion: version}
}

// Image returns the OCI payload image of b on the runtime base image base
// (a digest-pinned reference, normally toolchain Pins.Images.Runtime):
// bin/* goes to /usr/local/bin, share/* to /usr/share, and cuzk-daemon (or
// the only binary) is the entrypoint. The bundle's own SHA256SUMS stays out
// of the image; the layer digest covers the files.
func (b Bundle) Image(base string) (oci.Image, error) {
	img := oci.Image{
		Base:         base,
		Created:      b.Options.Epoch,
		OS:           b.Options.GOOS,
		RefName:      b.Options.Version,
		CreatedBy:    "cuzk release " + b.Options.Version,
		WorkingDir:   "/",
		Env:          append([]string(nil), ImageEnv...),
		Labels:       ImageLabels(b.Options.Version),
		Architecture: b.Options.GOARCH,
	}
	var bins []string
	for _, f := range b.Files {
		switch {
		case strings.HasPrefix(f.Path, "bin/"):
			img.Files = append(img.Files, oci.File{Path: ImageBinDir + strings.TrimPrefix(f.Path, "bin"), Mode: f.Mode, Data: f.Data})
			bins = append(bins, strings.TrimPrefix(f.Path, "bin/"))
		case strings.HasPrefix(f.Path, "share/"):
			img.Files = append(img.Files, oci.File{Path: ImageShareDir + strings.TrimPrefix(f.Path, "share"), Mode: f.Mode, Data: f.Data})
		}
	}
	switch {
	case contains(bins, DaemonBinary):
		img.Entrypoint = []string{ImageBinDir + "/" + DaemonBinary}
	case len(bins) == 1:
		img.Entrypoint = []string{ImageBinDir + "/" + bins[0]}
	default:
		return oci.Image{}, fmt.Errorf("release image: no %s among binaries %v", DaemonBinary, bins)
	}
	return img, img.Validate()
}

// WriteImage writes b's payload image as an OCI layout into dir (absent or
// empty), verifies it, and returns the manifest descriptor.
func (b Bundle) WriteImage(dir, base string) (oci.Descriptor, error) {
	img, err := b.Image(base)
	if err != nil {
		return oci.Descriptor{}, err
	}
	d, err := oci.Write(dir, img)
	if err != nil {
		return oci.Descriptor{}, fmt.Errorf("release image: %w", err)
	}
	if _, err := oci.Verify(dir); err != nil {
		return oci.Descriptor{}, fmt.Errorf("release image: %w", err)
	}
	return d, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
