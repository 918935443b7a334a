package cli

import "flag"

// SecretVar defines the string flag name whose default is the value of the
// environment variable env (read with getenv), and whose value help never
// shows: the flag's line says "(set from $ENV)" or "($ENV is not set)"
// instead of a default. Use it for a token, a password or a key, so that
// "-h" on a shared terminal or in a CI log prints no secret.
func SecretVar(fs *flag.FlagSet, p *string, name, env, usage string, getenv func(string) string) {
	*p = getenv(env)
	where := " ($" + env + " is not set)"
	if *p != "" {
		where = " (set from $" + env + ")"
	}
	fs.Var(secret{p}, name, usage+where)
}

// secret is a flag.Value that keeps its string out of String, which the
// flag package prints as the default in help.
type secret struct{ p *string }

func (s secret) String() string { return "" }

func (s secret) Set(v string) error {
	*s.p = v
	return nil
}
