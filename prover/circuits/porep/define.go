package porep

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/circuits/merkle"
	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/circuits/sha256"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Define implements r1cs.Circuit: a head (the public inputs, the replica
// id's bits, comm_r_last), the challenges and the column chain as
// independent segments (r1cs.Parallel), and comm_r.
func (c *Circuit) Define(api r1cs.API) error {
	pub := c.PublicInputs()
	replica, commR := api.Public(pub[0]), api.Public(pub[1])
	chals := make([]r1cs.Variable, len(c.Challenges))
	for i := range chals {
		chals[i] = api.Public(pub[2+i])
	}
	var replicaBits []sha256.Bit
	if c.Layout.Labelled > 0 {
		pop := api.Namespace("replica")
		replicaBits = allocReplica(api, c.ReplicaID)
		api.Enforce(packLE(replicaBits), r1cs.ConstUint64(1), r1cs.V(replica))
		pop()
	}
	rootLast := api.Private(c.commRLast)
	var commC r1cs.LC
	if err := r1cs.Parallel(api, c.segments(replicaBits, chals, rootLast, &commC)); err != nil {
		return fmt.Errorf("porep-synth: %w", err)
	}
	defer api.Namespace("comm_r")()
	got, err := poseidon.Width3().HashGadget(api, commC, r1cs.V(rootLast))
	if err != nil {
		return fmt.Errorf("porep-synth comm_r: %w", err)
	}
	api.Enforce(got, r1cs.ConstUint64(1), r1cs.V(commR))
	return nil
}

// challenge proves that challenge i's leaf (its label when labelled) sits at
// the public index under comm_r_last.
func (c *Circuit) challenge(api r1cs.API, i int, p *merkle.Proof, replicaBits []sha256.Bit, chal, rootLast r1cs.Variable) error {
	defer api.Namespace(fmt.Sprintf("challenge%d", i))()
	var leaf r1cs.LC
	if i < c.Layout.Labelled {
		leaf = labelGadget(api, c.Layout.Shape, replicaBits, c.Challenges[i], chal, c.parents[i])
	} else {
		leaf = r1cs.V(api.Private(p.Leaf))
	}
	root, index, err := merkle.RootGadget(api, poseidon.Width9(), leaf, p)
	if err != nil {
		return fmt.Errorf("porep-synth challenge %d: %w", i, err)
	}
	api.Enforce(root, r1cs.ConstUint64(1), r1cs.V(rootLast))
	api.Enforce(index, r1cs.ConstUint64(1), r1cs.V(chal))
	return nil
}

// labelGadget computes the truncated label of node from the replica id bits,
// the node's 64 bits, which it binds to the public challenge, and its
// parents' labels, private bits.
func labelGadget(api r1cs.API, shape Shape, replicaBits []sha256.Bit, node uint64, chal r1cs.Variable, parents [Parents][32]byte) r1cs.LC {
	defer api.Namespace("label")()
	var le [8]byte
	for i := range le {
		le[i] = byte(node >> (8 * i))
	}
	nodeBits := sha256.AllocBytes(api, le[:])
	api.Enforce(packLE(nodeBits), r1cs.ConstUint64(1), r1cs.V(chal))
	msg := make([]sha256.Bit, 0, 8*labelBytes)
	msg = append(append(msg, replicaBits...), nodeBits...)
	for _, p := range parents {
		msg = append(msg, sha256.AllocBytes(api, p[:])...)
	}
	return merkle.TruncatedSHA256GadgetStyle(api, shape.sha256Style(), msg)
}

// packLE packs bytes given as FIPS-order bits (most significant bit of each
// byte first) as a little-endian integer.
func packLE(bits []sha256.Bit) r1cs.LC {
	le := make([]sha256.Bit, 0, len(bits))
	for i := 0; i < len(bits); i++ {
		le = append(le, bits[8*(i/8)+7-i%8])
	}
	return sha256.Pack(le)
}

// columnChain hashes the column inputs into comm_c, starting from a private
// seed, and returns it.
func (c *Circuit) columnChain(api r1cs.API) (r1cs.LC, error) {
	defer api.Namespace("columns")()
	acc := r1cs.V(api.Private(c.columnSeed))
	k := 0
	for w, n := range c.Layout.Fill {
		p := fillWidths[w]()
		for range n {
			in := []r1cs.LC{acc}
			for _, v := range c.columns[k] {
				in = append(in, r1cs.V(api.Private(v)))
			}
			var err error
			if acc, err = p.HashGadget(api, in...); err != nil {
				return nil, fmt.Errorf("porep-synth column %d: %w", k, err)
			}
			k++
		}
	}
	return acc, nil
}

// allocReplica allocates the replica id's bits in FIPS order, with the two
// most significant bits of the little-endian value fixed to zero so that its
// packing stays below p.
func allocReplica(api r1cs.API, id [32]byte) []sha256.Bit {
	bits := sha256.AllocBytes(api, id[:31])
	last := id[31]
	bits = append(bits, sha256.ConstBit(false), sha256.ConstBit(false))
	for i := 5; i >= 0; i-- {
		bits = append(bits, sha256.AllocBit(api, last>>i&1 == 1))
	}
	return bits
}
