package docker

import (
	"context"
	"fmt"
	"sort"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// iccOption turns off traffic between containers on the bridge: instances
// must not reach each other, only the host (the edge) reaches them.
const iccOption = "com.docker.network.bridge.enable_icc"

// ensureNetwork returns the id of the instance network, creating it when
// missing. Engines before API 1.44 accept duplicate network names, so two
// installs starting at once may both create one; every install then picks
// the oldest, and a loser removes its own copy, so all converge on one.
func (d *Driver) ensureNetwork(ctx context.Context) (string, error) {
	nets, err := d.networksNamed(ctx)
	if err != nil {
		return "", err
	}
	if len(nets) == 0 {
		created, err := d.c.NetworkCreate(ctx, d.cfg.Network, client.NetworkCreateOptions{
			Driver:  "bridge",
			Options: map[string]string{iccOption: "false"},
			Labels:  map[string]string{"svc.network": "instances"},
		})
		if err != nil {
			return "", fmt.Errorf("docker: create network %s: %w", d.cfg.Network, err)
		}
		if nets, err = d.networksNamed(ctx); err != nil {
			return "", err
		}
		if len(nets) > 0 && nets[0].ID != created.ID {
			_, _ = d.c.NetworkRemove(ctx, created.ID, client.NetworkRemoveOptions{})
		}
	}
	if len(nets) == 0 {
		return "", fmt.Errorf("docker: network %s vanished after create", d.cfg.Network)
	}
	n := nets[0]
	if n.Driver != "bridge" || n.Options[iccOption] != "false" {
		return "", fmt.Errorf("docker: network %s exists but is not a bridge with %s=false; remove it or pick another network",
			d.cfg.Network, iccOption)
	}
	return n.ID, nil
}

// networksNamed lists networks with exactly the configured name, oldest
// first (the name filter also matches substrings).
func (d *Driver) networksNamed(ctx context.Context) ([]network.Summary, error) {
	res, err := d.c.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("name", d.cfg.Network)})
	if err != nil {
		return nil, fmt.Errorf("docker: list networks: %w", err)
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
