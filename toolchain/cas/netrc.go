package cas

import (
	"bufio"
	"strings"
)

// NetrcLookup returns the login and password that a netrc file's text
// gives for host (a machine entry, else the default entry), as curl and
// Go's cmd/go read ~/.netrc. ok is false when neither names the host.
func NetrcLookup(netrc, host string) (login, password string, ok bool) {
	var def, cur *netrcEntry
	var found *netrcEntry
	sc := bufio.NewScanner(strings.NewReader(netrc))
	sc.Split(bufio.ScanLines)
	var tokens []string
	inMacro := false
	for sc.Scan() {
		line := sc.Text()
		if inMacro {
			// A macro definition runs to the next empty line.
			inMacro = strings.TrimSpace(line) != ""
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		f := strings.Fields(line)
		for i := 0; i < len(f); i++ {
			if f[i] == "macdef" {
				inMacro = true
				break
			}
			tokens = append(tokens, f[i])
		}
	}
	for i := 0; i < len(tokens); i++ {
		switch tokens[i] {
		case "machine":
			cur = nil
			if i+1 < len(tokens) {
				i++
				e := &netrcEntry{}
				if tokens[i] == host && found == nil {
					found = e
				}
				cur = e
			}
		case "default":
			def = &netrcEntry{}
			cur = def
		case "login", "password", "account":
			if i+1 >= len(tokens) {
				break
			}
			i++
			if cur == nil {
				continue
			}
			switch tokens[i-1] {
			case "login":
				cur.login = tokens[i]
			case "password":
				cur.password = tokens[i]
			}
		}
	}
	if found == nil {
		found = def
	}
	if found == nil {
		return "", "", false
	}
	return found.login, found.password, true
}

type netrcEntry struct{ login, password string }
