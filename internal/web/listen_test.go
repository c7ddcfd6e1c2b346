package web

import "testing"

// TestAddr: a bare port is loopback; ":port" and a routable host reach beyond this
// machine, which the caller reports; nonsense is refused with the form to use.
func TestAddr(t *testing.T) {
	for _, c := range []struct {
		flag, addr string
		public     bool
		err        string
	}{
		{"9249", "127.0.0.1:9249", false, ""},
		{"127.0.0.1:9249", "127.0.0.1:9249", false, ""},
		{"localhost:8081", "localhost:8081", false, ""},
		{"[::1]:8081", "[::1]:8081", false, ""},
		{":9249", ":9249", true, ""},
		{"0.0.0.0:9249", "0.0.0.0:9249", true, ""},
		{"10.1.2.3:9249", "10.1.2.3:9249", true, ""},
		{"example.com:9249", "example.com:9249", true, ""},
		{"127.0.0.1", "", false, `address "127.0.0.1": give host:port (such as 127.0.0.1:8081) or a port`},
		{"127.0.0.1:http", "", false, `address "127.0.0.1:http": port "http" is not a number from 0 to 65535`},
		{"", "", false, "empty address"},
	} {
		addr, public, err := Addr(c.flag)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("Addr(%q): error %v, want %q", c.flag, err, c.err)
			}
			continue
		}
		if err != nil || addr != c.addr || public != c.public {
			t.Errorf("Addr(%q) = %q, %v, %v; want %q, %v", c.flag, addr, public, err, c.addr, c.public)
		}
	}
}
