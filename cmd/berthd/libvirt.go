package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
)

// withLibvirt runs fn on the libvirt driver of an opened application.
func (g *globals) withLibvirt(cmd *cobra.Command, fn func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error)) error {
	ctx := cmd.Context()
	a, err := g.open(ctx, app.Config{Logger: quietLogger(), Create: app.CreateNever})
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

// hostJSON is a host as the admin commands print it: accel is what its guests run
// with (kvm or tcg), accel_mode what was asked when it was added (auto, kvm, tcg);
// accel_note, from host add only, why KVM is not used or is doubted.
func hostJSON(h libvirtdriver.Host) map[string]any {
	out := map[string]any{"id": h.ID, "location_id": h.LocationID, "uri": h.URI, "vcpus": h.VCPUs, "memory_mb": h.MemoryMB,
		"disk_gb": h.DiskGB, "used_vcpus": h.UsedVCPUs, "used_memory_mb": h.UsedMemoryMB, "used_disk_gb": h.UsedDisk,
		"machines": h.Machines, "pool": h.Pool, "bridge": h.Bridge, "console_dir": h.ConsoleDir, "draining": h.Draining,
		"accel": h.Accel, "accel_mode": h.AccelMode}
	if h.AccelNote != "" {
		out["accel_note"] = h.AccelNote
	}
	return out
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
				if _, err := a.DB.Location(ctx, s.LocationID); err != nil {
					return nil, fail("--location %d: no such location", s.LocationID)
				}
				s.MemoryMB = memoryGB * 1024
				h, err := d.AddHost(ctx, s)
				return hostJSON(h), err
			})
		},
	}
	add.Flags().Int64Var(&s.LocationID, "location", 0, "location id (required)")
	add.Flags().StringVar(&s.URI, "uri", "", "libvirt URI: qemu:///system, qemu+tcp://HOST/system, qemu+tls://HOST/system, qemu+ssh://USER@HOST/system (required)")
	add.Flags().IntVar(&s.VCPUs, "vcpus", 0, "vCPUs Berth may place there (default: the host's CPUs)")
	add.Flags().IntVar(&memoryGB, "memory-gb", 0, "memory Berth may place there, GB (default: the host's less 1 GB)")
	add.Flags().IntVar(&s.DiskGB, "disk-gb", 0, "disk Berth may place there, GB (default: the pool's capacity)")
	add.Flags().StringVar(&s.Pool, "pool", "berth", "libvirt storage pool for images, disks and seeds")
	add.Flags().StringVar(&s.Bridge, "bridge", "berth0", "bridge the guests' NICs join")
	add.Flags().StringVar(&s.ConsoleDir, "console-dir", "", "directory on the host for guests' serial logs (default /var/log/libvirt/qemu; - for none)")
	add.Flags().StringVar(&s.Accel, "accel", libvirtdriver.AccelAuto, "how guests run: auto (KVM when the host has a usable one, else TCG), kvm (a host that cannot start a guest with it says so), tcg (QEMU's emulation)")
	_ = add.MarkFlagRequired("location")
	_ = add.MarkFlagRequired("uri")
	var location int64
	list := &cobra.Command{
		Use:   "list",
		Short: "List hosts with what is placed on them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withLibvirt(cmd, func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error) {
				hs, err := d.Hosts(ctx, location)
				out := []map[string]any{}
				for _, h := range hs {
					out = append(out, hostJSON(h))
				}
				return map[string]any{"hosts": out}, err
			})
		},
	}
	list.Flags().Int64Var(&location, "location", 0, "only this location's hosts")
	drain := func(use string, on bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " ID",
			Short: use + " a host (a draining host gets no new machines; those on it stay)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return g.withLibvirt(cmd, func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error) {
					id, err := idArg(args)
					if err != nil {
						return nil, err
					}
					h, err := d.SetDraining(ctx, id, on)
					return hostJSON(h), err
				})
			},
		}
	}
	accel := &cobra.Command{
		Use:   "accel ID auto|kvm|tcg",
		Short: "Change how a host runs new guests (probing it again); guests defined before keep theirs",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withLibvirt(cmd, func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error) {
				id, err := idArg(args[:1])
				if err != nil {
					return nil, err
				}
				switch args[1] {
				case libvirtdriver.AccelAuto, libvirtdriver.AccelKVM, libvirtdriver.AccelTCG:
				default:
					return nil, fail("%q: auto, kvm or tcg", args[1])
				}
				h, err := d.SetAccel(ctx, id, args[1])
				return hostJSON(h), err
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
				hosts := []map[string]any{}
				for _, i := range done {
					hosts = append(hosts, map[string]any{"host_id": i.HostID, "volume": i.Volume, "path": i.Path})
				}
				sum := ""
				if len(done) > 0 {
					sum = done[0].SHA256
				}
				return map[string]any{"image_id": image, "location_id": location, "file": args[0], "sha256": sum, "hosts": hosts}, nil
			})
		},
	}
	imp.Flags().Int64Var(&location, "location", 0, "location id (required)")
	imp.Flags().Int64Var(&image, "image", 0, "catalog image id (required)")
	_ = imp.MarkFlagRequired("location")
	_ = imp.MarkFlagRequired("image")
	cmd.AddCommand(imp)
	return cmd
}

func poolJSON(p libvirtdriver.Pool) map[string]any {
	return map[string]any{"id": p.ID, "location_id": p.LocationID, "cidr": p.CIDR, "gateway": p.Gateway, "first": p.First,
		"last": p.Last, "ipv6_prefix": p.IPv6Prefix, "dns": p.DNS, "size": p.Size, "used": p.Used}
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
				if _, err := a.DB.Location(ctx, s.LocationID); err != nil {
					return nil, fail("--location %d: no such location", s.LocationID)
				}
				if dns != "" {
					s.DNS = strings.Split(dns, ",")
				}
				p, err := d.AddPool(ctx, s)
				return poolJSON(p), err
			})
		},
	}
	add.Flags().Int64Var(&s.LocationID, "location", 0, "location id (required)")
	add.Flags().StringVar(&s.CIDR, "cidr", "", "IPv4 network, e.g. 10.77.0.0/24 (required)")
	add.Flags().StringVar(&s.Gateway, "gateway", "", "gateway address (required)")
	add.Flags().StringVar(&s.First, "first", "", "first address handed out (default: the network's first host)")
	add.Flags().StringVar(&s.Last, "last", "", "last address handed out (default: the network's last host)")
	add.Flags().StringVar(&s.IPv6Prefix, "ipv6-prefix", "", "IPv6 prefix; a machine gets it plus its IPv4 address")
	add.Flags().StringVar(&dns, "dns", "", "comma-separated nameservers for the guests")
	_ = add.MarkFlagRequired("location")
	_ = add.MarkFlagRequired("cidr")
	_ = add.MarkFlagRequired("gateway")
	var location int64
	list := &cobra.Command{
		Use:   "list",
		Short: "List address pools with how many addresses are held",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withLibvirt(cmd, func(ctx context.Context, a *app.App, d *libvirtdriver.Driver) (any, error) {
				ps, err := d.Pools(ctx, location)
				out := []map[string]any{}
				for _, p := range ps {
					out = append(out, poolJSON(p))
				}
				return map[string]any{"pools": out}, err
			})
		},
	}
	list.Flags().Int64Var(&location, "location", 0, "only this location's pools")
	cmd.AddCommand(add, list)
	return cmd
}
