package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
)

// withLibvirt runs fn on the libvirt driver of an opened application and prints what
// it returns.
func (g *globals) withLibvirt(cmd *cobra.Command, fn func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error)) error {
	ctx := cmd.Context()
	a, err := g.openExisting(ctx)
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	d := a.LibvirtDriver()
	defer d.Close()
	out, err := fn(ctx, a, d)
	if err != nil {
		return err
	}
	return printJSON(out)
}

// withDriver is withLibvirt for a command that needs only the driver.
func (g *globals) withDriver(cmd *cobra.Command, fn func(ctx context.Context, d *libvirtdriver.Driver) (any, error)) error {
	return g.withLibvirt(cmd, func(ctx context.Context, _ *app.App, d *libvirtdriver.Driver) (any, error) { return fn(ctx, d) })
}

// hasLocation refuses a --location the catalog does not have.
func hasLocation(ctx context.Context, a *app.App, id int64) error {
	if _, err := a.DB.Location(ctx, id); err != nil {
		return fail("--location %d: no such location", id)
	}
	return nil
}

func hostCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "host", Short: "Hypervisor hosts of the libvirt driver"}
	var s libvirtdriver.HostSpec
	var memoryGB int
	add := &cobra.Command{
		Use:   "add",
		Short: "Add a libvirt host to a location (it must be reachable and have the storage pool)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withLibvirt(cmd, func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error) {
				if err := hasLocation(ctx, a, s.LocationID); err != nil {
					return nil, err
				}
				s.MemoryMB = memoryGB * 1024
				h, err := d.AddHost(ctx, s)
				return hostOf(h), err
			})
		},
	}
	idFlag(add, &s.LocationID, "location", "location id (required)")
	add.Flags().StringVar(&s.URI, "uri", "", "libvirt URI: qemu:///system, qemu+tcp://HOST/system, qemu+tls://HOST/system, qemu+ssh://USER@HOST/system (required)")
	add.Flags().IntVar(&s.VCPUs, "vcpus", 0, "vCPUs Berth may place there (default: the host's CPUs)")
	add.Flags().IntVar(&memoryGB, "memory-gb", 0, "memory Berth may place there, GB (default: the host's less 1 GB)")
	add.Flags().IntVar(&s.DiskGB, "disk-gb", 0, "disk Berth may place there, GB (default: the pool's capacity)")
	add.Flags().StringVar(&s.Pool, "pool", "berth", "libvirt storage pool for images, disks and seeds")
	add.Flags().StringVar(&s.Bridge, "bridge", "berth0", "bridge the guests' NICs join")
	add.Flags().StringVar(&s.ConsoleDir, "console-dir", "", "directory on the host for guests' serial logs (default /var/log/libvirt/qemu; - for none)")
	add.Flags().StringVar(&s.Accel, "accel", libvirtdriver.AccelAuto, "how guests run: auto (KVM when the host has a usable one, else TCG), kvm (a host that cannot start a guest with it says so), tcg (QEMU's emulation)")
	_ = add.MarkFlagRequired("uri")
	var location int64
	list := &cobra.Command{
		Use:   "list",
		Short: "List hosts with what is placed on them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withDriver(cmd, func(ctx context.Context, d *libvirtdriver.Driver) (any, error) {
				hs, err := d.Hosts(ctx, location)
				return struct {
					Hosts []hostOut `json:"hosts"`
				}{each(hs, hostOf)}, err
			})
		},
	}
	list.Flags().Int64Var(&location, "location", 0, "only this location's hosts")
	drain := func(use string, on bool) *cobra.Command {
		return idCommand[*libvirtdriver.Driver, hostOut]{use: use,
			short: use + " a host (a draining host gets no new machines; those on it stay)",
			run: func(ctx context.Context, d *libvirtdriver.Driver, id int64) (hostOut, error) {
				h, err := d.SetDraining(ctx, id, on)
				return hostOf(h), err
			}}.command(g.withDriver)
	}
	accel := &cobra.Command{
		Use:   "accel ID auto|kvm|tcg",
		Short: "Change how a host runs new guests (probing it again); guests defined before keep theirs",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withDriver(cmd, func(ctx context.Context, d *libvirtdriver.Driver) (any, error) {
				id, err := idArg(args[0])
				if err != nil {
					return nil, err
				}
				switch args[1] {
				case libvirtdriver.AccelAuto, libvirtdriver.AccelKVM, libvirtdriver.AccelTCG:
				default:
					return nil, fail("%q: auto, kvm or tcg", args[1])
				}
				h, err := d.SetAccel(ctx, id, args[1])
				return hostOf(h), err
			})
		},
	}
	cmd.AddCommand(add, list, drain("drain", true), drain("undrain", false), accel)
	return cmd
}

func imageCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "image", Short: "Base images of the libvirt driver"}
	var location, image int64
	imp := &cobra.Command{
		Use:   "import FILE.qcow2",
		Short: "Upload a base disk image (qcow2) for a catalog image into the pool of every host of a location",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withLibvirt(cmd, func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error) {
				if _, err := a.DB.Image(ctx, image); err != nil {
					return nil, fail("--image %d: no such catalog image", image)
				}
				done, err := d.ImportImage(ctx, location, fmt.Sprintf("image-%d", image), args[0])
				if err != nil {
					return nil, err
				}
				out := imageImported{File: args[0], ImageID: image, LocationID: location,
					Hosts: each(done, func(i libvirtdriver.ImportedImage) imageOnHost {
						return imageOnHost{HostID: i.HostID, Path: i.Path, Volume: i.Volume}
					})}
				if len(done) > 0 {
					out.SHA256 = done[0].SHA256
				}
				return out, nil
			})
		},
	}
	idFlag(imp, &location, "location", "location id (required)")
	idFlag(imp, &image, "image", "catalog image id (required)")
	cmd.AddCommand(imp)
	return cmd
}

func poolCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "pool", Short: "Address pools of the libvirt driver (static addresses per location)"}
	var s libvirtdriver.PoolSpec
	var dns string
	add := &cobra.Command{
		Use:   "add",
		Short: "Add a range of static IPv4 addresses (and an IPv6 prefix) to a location",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withLibvirt(cmd, func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error) {
				if err := hasLocation(ctx, a, s.LocationID); err != nil {
					return nil, err
				}
				if dns != "" {
					s.DNS = strings.Split(dns, ",")
				}
				p, err := d.AddPool(ctx, s)
				return poolOf(p), err
			})
		},
	}
	idFlag(add, &s.LocationID, "location", "location id (required)")
	add.Flags().StringVar(&s.CIDR, "cidr", "", "IPv4 network, e.g. 10.77.0.0/24 (required)")
	add.Flags().StringVar(&s.Gateway, "gateway", "", "gateway address (required)")
	add.Flags().StringVar(&s.First, "first", "", "first address handed out (default: the network's first host)")
	add.Flags().StringVar(&s.Last, "last", "", "last address handed out (default: the network's last host)")
	add.Flags().StringVar(&s.IPv6Prefix, "ipv6-prefix", "", "IPv6 prefix; a machine gets it plus its IPv4 address")
	add.Flags().StringVar(&dns, "dns", "", "comma-separated nameservers for the guests")
	_ = add.MarkFlagRequired("cidr")
	_ = add.MarkFlagRequired("gateway")
	var location int64
	list := &cobra.Command{
		Use:   "list",
		Short: "List address pools with how many addresses are held",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withDriver(cmd, func(ctx context.Context, d *libvirtdriver.Driver) (any, error) {
				ps, err := d.Pools(ctx, location)
				return struct {
					Pools []poolOut `json:"pools"`
				}{each(ps, poolOf)}, err
			})
		},
	}
	list.Flags().Int64Var(&location, "location", 0, "only this location's pools")
	cmd.AddCommand(add, list)
	return cmd
}

func volumePoolCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "volume-pool", Short: "Storage pools of the libvirt driver's volumes (one per location)"}
	var location int64
	var pool string
	set := &cobra.Command{
		Use:   "set",
		Short: "Name the storage pool a location's new volumes go into (active and shared on every host of the location)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withLibvirt(cmd, func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error) {
				if err := hasLocation(ctx, a, location); err != nil {
					return nil, err
				}
				p, err := d.SetVolumePool(ctx, location, pool)
				return volumePoolOf(p), err
			})
		},
	}
	idFlag(set, &location, "location", "location id (required)")
	set.Flags().StringVar(&pool, "pool", "", "libvirt storage pool (dir for one host; netfs or rbd shared by several) (required)")
	_ = set.MarkFlagRequired("pool")
	var only int64
	list := &cobra.Command{
		Use:   "list",
		Short: "List the locations' volume pools with how many volumes each holds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withDriver(cmd, func(ctx context.Context, d *libvirtdriver.Driver) (any, error) {
				ps, err := d.VolumePools(ctx, only)
				return struct {
					Pools []volumePoolOut `json:"volume_pools"`
				}{each(ps, volumePoolOf)}, err
			})
		},
	}
	list.Flags().Int64Var(&only, "location", 0, "only this location's pool")
	cmd.AddCommand(set, list)
	return cmd
}
