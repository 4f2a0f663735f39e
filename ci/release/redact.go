package release

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// redactor scrubs the tokens, and the forms they travel in (HTTP basic
// auth's base64, URL escaping), from text before it is printed or returned:
// a server that echoes a request header in an error body must not make the
// run print a token.
type redactor struct{ secrets []string }

const redacted = "[redacted]"

func newRedactor(c Config) *redactor {
	r := &redactor{}
	for _, tok := range []string{c.GitHubToken, c.IndexToken} {
		if len(tok) < 6 {
			continue // nothing that short is a real token; scrubbing it would garble every message
		}
		user := c.IndexUser
		if user == "" {
			user = "__token__"
		}
		r.secrets = append(r.secrets, tok, url.QueryEscape(tok), url.PathEscape(tok),
			base64.StdEncoding.EncodeToString([]byte(user+":"+tok)),
			base64.StdEncoding.EncodeToString([]byte(tok)))
	}
	return r
}

func (r *redactor) redact(s string) string {
	for _, sec := range r.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}
