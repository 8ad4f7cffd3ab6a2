package docker

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"sort"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// iccOption turns off traffic between containers on the bridge: instances
// must not reach each other, only the host (the edge) reaches them.
const iccOption = "com.docker.network.bridge.enable_icc"

// ensureNetwork returns the id of the instance network, creating it when
// missing. Engines before API 1.44 accept duplicate names, and a duplicate
// makes every container start fail ("network is ambiguous"), so installs
// on one host take a host-wide file lock around the check and create, and
// remove unused duplicates that an earlier race left.
func (d *Driver) ensureNetwork(ctx context.Context) (string, error) {
	unlock, err := hostLock("svc-network-" + d.cfg.Network)
	if err != nil {
		return "", errorf("lock network %s: %w", d.cfg.Network, err)
	}
	defer unlock()
	nets, err := d.networksNamed(ctx)
	if err != nil {
		return "", err
	}
	if len(nets) == 0 {
		_, err := d.c.NetworkCreate(ctx, d.cfg.Network, client.NetworkCreateOptions{
			Driver:  "bridge",
			Options: map[string]string{iccOption: "false"},
			Labels:  map[string]string{"svc.network": "instances"},
		})
		if err != nil {
			return "", errorf("create network %s: %w", d.cfg.Network, err)
		}
		if nets, err = d.networksNamed(ctx); err != nil {
			return "", err
		}
		if len(nets) == 0 {
			return "", errorf("network %s vanished after create", d.cfg.Network)
		}
	}
	for _, extra := range nets[1:] {
		if _, err := d.c.NetworkRemove(ctx, extra.ID, client.NetworkRemoveOptions{}); err != nil {
			return "", errorf("network %s exists twice and %s cannot go: %w", d.cfg.Network, extra.ID, err)
		}
	}
	n := nets[0]
	if n.Driver != "bridge" || n.Options[iccOption] != "false" {
		return "", errorf("network %s exists but is not a bridge with %s=false; remove it or pick another network",
			d.cfg.Network, iccOption)
	}
	return n.ID, nil
}

// hostLock takes an exclusive flock shared by every process on the host.
func hostLock(name string) (func(), error) {
	dir := "/run/lock"
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = os.TempDir()
	}
	f, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// networksNamed lists networks with exactly the configured name, oldest
// first (the name filter also matches substrings).
func (d *Driver) networksNamed(ctx context.Context) ([]network.Summary, error) {
	res, err := d.c.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("name", d.cfg.Network)})
	if err != nil {
		return nil, errorf("list networks: %w", err)
	}
	var out []network.Summary
	for _, n := range res.Items {
		if n.Name == d.cfg.Network {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// HostAddr is the host's address on the instance network (the bridge
// gateway): containers reach svcd's instance-facing endpoints there, even
// when the API listens on loopback only.
func (d *Driver) HostAddr(ctx context.Context) (netip.Addr, error) {
	res, err := d.c.NetworkInspect(ctx, d.networkID, client.NetworkInspectOptions{})
	if err != nil {
		return netip.Addr{}, errorf("inspect network %s: %w", d.cfg.Network, err)
	}
	for _, c := range res.Network.IPAM.Config {
		if c.Gateway.Is4() {
			return c.Gateway, nil
		}
	}
	return netip.Addr{}, errorf("network %s has no IPv4 gateway", d.cfg.Network)
}
