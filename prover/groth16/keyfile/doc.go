// Package keyfile stores Groth16 proving keys in a raw file that loads by
// mmap without decoding. Points are kept exactly as gnark-crypto holds
// them in memory (bls12381.G1Affine and G2Affine: Montgomery-form,
// little-endian 64-bit limbs), so Open makes the key's point slices views
// of the mapped file: loading costs the page cache's copy (or a disk read)
// and, optionally, one SHA-256 pass, instead of a square root per point.
//
// The layout (version 1; all integers little-endian):
//
//	offset 0      header page (4 KiB): magic "CUZKRAWK", version, curve id,
//	              flags, domain size, publics, privates, file size, hash
//	              piece size, and a table of seven sections (id, element
//	              size, count, offset, length, sum), then the SHA-256 of
//	              everything before it
//	section 0     small points: G1 α, β, δ; G2 β, δ (672 bytes)
//	section 1, 2  InfinityA, InfinityB: one byte (0 or 1) per variable
//	section 3, 4  G1 A, G1 B (points with a non-infinite polynomial)
//	section 5     G1 L‖H: NbPrivate L points, then DomainSize−1 H points,
//	              one section so that Prove's fused L‖H MSM applies
//	section 6     G2 B
//
// A section's sum is the SHA-256 of the SHA-256s of its 64 MiB pieces, so
// that verifying a large section uses every core (one SHA-256 stream runs
// at about 2 GB/s; the L‖H section of a 2^27 key is 26 GB).
//
// Every section starts on a 4 KiB boundary (for mmap and O_DIRECT) and is
// followed by zero padding to the next one (written as zeros, covered by no
// checksum, and ignored when read). The file is written from a
// ProvingKey through internal/renameio (fsync of the file and of its
// directory), so no reader ever sees half of one. Write checks every point
// on the curve and in the prime-order subgroup unless told not to, and the
// header's FlagChecked records that it did, so loading never repeats it.
//
// The format is the host's memory layout: it is written and read only on
// little-endian 64-bit hosts, which Open and Write check.
package keyfile
