package client

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
)

func TestJSONForScripts(t *testing.T) {
	st := &pb.GetStatusResponse{Backend: "gpu", UptimeNs: 1 << 40,
		Devices: []*pb.Device{{Name: "gpu0", MemoryBytes: 150_000_000_000, BusyRatio: 0.5}},
		Keys:    []*pb.KeyInfo{{Key: "porep-synth/constraints=1024", Tier: pb.KeyTier_KEY_TIER_HOT, HotOn: []string{"gpu0"}}}}
	b, err := JSON(st, false)
	require.NoError(t, err)
	var got map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&got))
	assert.Equal(t, json.Number("1099511627776"), got["uptime_ns"], "int64 as a number")
	assert.Equal(t, "gpu", got["backend"])
	assert.Equal(t, "", got["cpu_reason"], "zero values present")
	assert.Nil(t, got["queue"], "an unset message is null")
	dev := got["devices"].([]any)[0].(map[string]any)
	assert.Equal(t, json.Number("150000000000"), dev["memory_bytes"])
	assert.Equal(t, json.Number("0.5"), dev["busy_ratio"])
	key := got["keys"].([]any)[0].(map[string]any)
	assert.Equal(t, "hot", key["tier"], "enums by short name")
	assert.Equal(t, []any{"gpu0"}, key["hot_on"])

	res := &pb.ProofResult{JobId: "j1", State: pb.JobState_JOB_STATE_DONE, ProofCompressed: []byte{0xab, 0x01},
		Timings: &pb.Timings{PhasesNs: map[string]int64{"msm": 7}}}
	b, err = JSON(res, true)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"proof_compressed": "ab01"`)
	assert.Contains(t, string(b), `"state": "done"`)
	assert.Contains(t, string(b), `"msm": 7`)
	assert.Contains(t, string(b), `"partitions": []`)
}

func TestEnumNames(t *testing.T) {
	assert.Equal(t, "gpu_phase", EnumName(pb.EventKind_EVENT_KIND_GPU_PHASE))
	assert.Equal(t, "critical", EnumName(pb.Priority_PRIORITY_CRITICAL))
	assert.Equal(t, "99", EnumName(pb.JobState(99)))
	ed := pb.KeyTier(0).Descriptor()
	for _, s := range []string{"hot", "HOT", "key_tier_hot", " Hot "} {
		n, ok := ParseEnum(ed, s)
		assert.True(t, ok, s)
		assert.Equal(t, pb.KeyTier_KEY_TIER_HOT.Number(), n, s)
	}
	_, ok := ParseEnum(ed, "lukewarm")
	assert.False(t, ok)
	assert.Equal(t, []string{"cold", "warm", "hot"}, EnumNames(ed))
}
