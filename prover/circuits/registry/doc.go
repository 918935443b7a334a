// Package registry names the circuits a proving service serves: each by an
// id, with typed numeric parameters that fix its shape and a documented
// byte encoding of its private input. The daemon resolves requests here;
// clients build inputs with the same encoders.
//
//	porep-synth      params: constraints (1024..2^27). input: 8 bytes, the
//	                 little-endian int64 seed that every value of the
//	                 instance (replica id, tree, challenges, columns)
//	                 derives from.
//	porep-c2         porep-synth shaped like a PoRep C2 partition (the
//	                 SHA-256 gadget in bellman's orientation: about a
//	                 quarter of the wires in B); same params and input.
//	sha256           params: bytes (1..65536), the message length. input:
//	                 the message, exactly that many bytes.
//	poseidon-merkle  params: depth (1..16) of an arity-8 Poseidon tree.
//	                 input: index (8 bytes little-endian) ‖ leaf (32 bytes)
//	                 ‖ for each level from the leaves up, 7 siblings (32
//	                 bytes each); field elements big-endian and canonical
//	                 (below r).
//
// Every error about a request wraps ErrInvalid and names the field.
package registry
