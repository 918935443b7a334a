package client

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// JSON encodes m for scripts: an object per message with the proto field
// names (snake_case), every scalar field present (zero values included),
// 64-bit integers as JSON numbers (protojson writes them as strings), enums
// as their short lower-case names ("proving", "hot"; see EnumName) and bytes
// in hexadecimal. An unset message field is null. With indent, objects span
// lines, two spaces deep. Map keys come out sorted.
func JSON(m proto.Message, indent bool) ([]byte, error) {
	v := messageValue(m.ProtoReflect())
	if indent {
		return json.MarshalIndent(v, "", "  ")
	}
	return json.Marshal(v)
}

// EnumName returns an enum value's name without its type's prefix, in
// lower case: JOB_STATE_PROVING → "proving", KEY_TIER_HOT → "hot",
// EVENT_KIND_GPU_PHASE → "gpu_phase". A number without a name comes out in
// decimal.
func EnumName(e protoreflect.Enum) string { return enumName(e.Descriptor(), e.Number()) }

func enumName(ed protoreflect.EnumDescriptor, n protoreflect.EnumNumber) string {
	v := ed.Values().ByNumber(n)
	if v == nil {
		return strconv.Itoa(int(n))
	}
	return strings.ToLower(strings.TrimPrefix(string(v.Name()), enumPrefix(ed)))
}

// ParseEnum returns the value of ed named s, with or without its type's
// prefix, in any case: "hot", "KEY_TIER_HOT". ok is false for no such value.
func ParseEnum(ed protoreflect.EnumDescriptor, s string) (n protoreflect.EnumNumber, ok bool) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(name, enumPrefix(ed)) {
		name = enumPrefix(ed) + name
	}
	v := ed.Values().ByName(protoreflect.Name(name))
	if v == nil {
		return 0, false
	}
	return v.Number(), true
}

// EnumNames lists ed's short names (as EnumName writes them) but the
// unspecified one, for help texts.
func EnumNames(ed protoreflect.EnumDescriptor) []string {
	var out []string
	for i := range ed.Values().Len() {
		if n := ed.Values().Get(i).Number(); n != 0 {
			out = append(out, enumName(ed, n))
		}
	}
	return out
}

// enumPrefix is the prefix of ed's value names: its type name in upper
// snake case and "_" (KeyTier: "KEY_TIER_").
func enumPrefix(ed protoreflect.EnumDescriptor) string {
	var b strings.Builder
	for i, r := range string(ed.Name()) {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String() + "_"
}

func messageValue(m protoreflect.Message) map[string]any {
	out := map[string]any{}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsList():
			l := m.Get(fd).List()
			vs := make([]any, l.Len())
			for j := range vs {
				vs[j] = scalarValue(fd, l.Get(j))
			}
			out[string(fd.Name())] = vs
		case fd.IsMap():
			mv := map[string]any{}
			m.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				mv[k.String()] = scalarValue(fd.MapValue(), v)
				return true
			})
			out[string(fd.Name())] = mv
		case fd.Message() != nil && !m.Has(fd):
			out[string(fd.Name())] = nil
		default:
			out[string(fd.Name())] = scalarValue(fd, m.Get(fd))
		}
	}
	return out
}

// scalarValue is one value of fd (an element, for a list or map field).
func scalarValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return messageValue(v.Message())
	case protoreflect.EnumKind:
		return enumName(fd.Enum(), v.Enum())
	case protoreflect.BytesKind:
		return hex.EncodeToString(v.Bytes())
	default:
		return v.Interface() // bool, integers, floats, string
	}
}
