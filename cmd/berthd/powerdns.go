package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/nameserver/powerdns"
	"github.com/berthhq/berth/internal/ops"
)

// powerdnsFlags say where PowerDNS's API is (docs/operating.md, DNS): serve's and
// `admin dns resync`'s.
type powerdnsFlags struct {
	url, keyFile string
}

func (p *powerdnsFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&p.url, "powerdns-url", "", "publish every DNS change to PowerDNS Authoritative through its HTTP API at this "+
		"base URL, e.g. http://127.0.0.1:8081: each change a durable job (default: none, only --dns-addr answers)")
	fl.StringVar(&p.keyFile, "powerdns-api-key-file", "", "file holding PowerDNS's api-key (its first line), not readable by others "+
		"(required with --powerdns-url)")
}

// maxKeyFile bounds what is read of the API key file.
const maxKeyFile = 4 << 10

// publisher is the PowerDNS client the flags describe, nil without --powerdns-url.
// The key file is read once, here; its key is never printed.
func (p *powerdnsFlags) publisher() (ops.DNSPublisher, error) {
	if p.url == "" {
		if p.keyFile != "" {
			return nil, errors.New("--powerdns-api-key-file needs --powerdns-url")
		}
		return nil, nil
	}
	if p.keyFile == "" {
		return nil, errors.New("--powerdns-url needs --powerdns-api-key-file, the file of PowerDNS's api-key")
	}
	key, err := readKeyFile(p.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--powerdns-api-key-file %s: %w", p.keyFile, err)
	}
	c, err := powerdns.New(powerdns.Options{URL: p.url, APIKey: key})
	if err != nil {
		return nil, fmt.Errorf("--powerdns-url %q: %v", p.url, err)
	}
	return c, nil
}

// readKeyFile reads a secret from the first line of a file that others cannot read
// (docs/SECURITY.md): a key others could read is refused, not used.
func readKeyFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	if perm := st.Mode().Perm(); perm&0o007 != 0 {
		return "", fmt.Errorf("readable by others (mode %04o): chmod o-rwx it (0600 or 0640)", perm)
	}
	b := make([]byte, maxKeyFile+1)
	n, _ := f.Read(b)
	if n > maxKeyFile {
		return "", fmt.Errorf("over %d bytes: not a key", maxKeyFile)
	}
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	key := strings.TrimSpace(line)
	if key == "" {
		return "", errors.New("holds no key (give it on the first line)")
	}
	return key, nil
}

// dnsCmd is `admin dns`: the operator's commands of DNS hosting.
func dnsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "dns", Short: "Republish DNS to PowerDNS"}
	var pf powerdnsFlags
	var defaultDomain, nameservers string
	resync := &cobra.Command{
		Use: "resync --powerdns-url URL --powerdns-api-key-file FILE",
		Short: "Publish every zone to PowerDNS again (after it lost its database), and withdraw the zones of Berth's it holds " +
			"that the store no longer has; give the --dns-* flags serve runs with",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, _, err := dnsConfig(&serveFlags{dnsDefaultDomain: defaultDomain, dnsNameservers: nameservers, powerdns: pf})
			if err != nil {
				return err
			}
			if opts.Publisher == nil {
				return errors.New("--powerdns-url is required: the PowerDNS to publish to")
			}
			return g.withApp(cmd, app.Config{DNS: opts}, func(ctx context.Context, s *ops.Service) (any, error) {
				r, err := s.ResyncDNS(ctx)
				out := resyncOut{Zones: r.Zones, Servers: r.Servers, ReverseZones: r.ReverseZones, Withdrawn: r.Withdrawn,
					StaleNames: r.StaleNames}
				if out.Withdrawn == nil {
					out.Withdrawn = []string{}
				}
				if out.StaleNames == nil {
					out.StaleNames = []string{}
				}
				return out, err
			})
		},
	}
	pf.add(resync.Flags())
	resync.Flags().StringVar(&defaultDomain, "dns-default-domain", app.DefaultDNSDomain, "serve's --dns-default-domain")
	resync.Flags().StringVar(&nameservers, "dns-nameservers", "", "serve's --dns-nameservers")
	cmd.AddCommand(resync)
	return cmd
}

// resyncOut is what `admin dns resync` prints: how many customers' zones, servers'
// names and reverse zones it published, the zones it withdrew, and the default
// domain's names of servers that are gone, which it removed.
type resyncOut struct {
	Zones        int      `json:"zones"`
	Servers      int      `json:"servers"`
	ReverseZones int      `json:"reverse_zones"`
	Withdrawn    []string `json:"withdrawn"`
	StaleNames   []string `json:"stale_names"`
}
