// Package keys keeps the daemon's proving keys in three tiers: cold (key
// files in the key directory), warm (decoded in host memory, with the
// circuit's compiled constraint system) and hot (bases resident on a GPU).
//
// A key is found by its circuit's shape key (registry.Resolved.Key). In the
// key directory, <name>.pk and <name>.vk (name: the shape key with "/"
// replaced by "-") are production keys, loaded as they are. When they are
// absent the manager uses development keys from prover/groth16/devkeys,
// generating them into the same directory when missing: such keys come
// from a publicly known trapdoor, are marked Development everywhere, and
// must never be used in production.
//
// The warm tier's fast path is the raw key file (prover/groth16/keyfile):
// <name>.rawpk beside <name>.vk is mapped read-only instead of decoding
// <name>.pk, and development keys get one written beside their cached pair,
// mapped on every later load. A manager hashes a raw file's sections the
// first time it maps it and, while the file keeps its size, modification
// time and header, maps it again from cold without hashing. A mapped key is
// unmapped when it drops to cold, which happens only once no one uses it.
// Each raw file is mapped under a lease (keyfile.Leased): another process
// truncating or rewriting it waits while the key is copied into private
// memory, its holders finish from that copy, new users are refused with an
// error naming the file, and the key goes cold once its jobs end.
//
// Host memory is budgeted: loading a key evicts the least recently used
// unreferenced warm keys until it fits; a key in use (Acquired and not yet
// Released) is never evicted, and an eviction asked for while it is in use
// happens when its last user lets go. GPU residency is per device, with a
// budget per device; the GPU worker of a device asks the manager which of
// its hot keys to drop (MakeRoomOn) before it uploads a new one.
//
// A load is shared by every caller of Acquire that needs the key while it
// runs, and belongs to none of them: it runs under the manager's context,
// each caller leaves on its own, and the load is cancelled only when the
// last one has left. Before any compile or read, a load knows its shape's
// counts (Shape: the circuit's own, or a counting pass that stores nothing)
// and reserves the key's room; only a development key compiles.
//
// The key directory is tidied: temporary files of interrupted writes are
// removed at start (all of them when no other manager holds the
// directory's shared lock), the files are trimmed to DirBudget by deleting
// the least recently used development keys, and a .pk left unread beside
// the .rawpk a load maps is checked in the background. ListDir, RemoveKey
// and VerifyKey serve the `cuzk-daemon keys` command.
package keys
