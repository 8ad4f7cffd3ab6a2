package sysimage_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/net/websocket"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/sysimage"
	"github.com/svc-dev/svc/internal/sysimage/sysimagetest"
	"github.com/svc-dev/svc/internal/template"
)

// EnvAllImages turns on the test of all eight images: the first build takes
// several minutes (Chromium, n8n), too long for every `make test`.
// `make test-images` sets it.
const EnvAllImages = "SVC_TEST_ALL_IMAGES"

// exposedPorts are the ports each image declares.
var exposedPorts = map[string][]int{
	"svc-general":  {3737, 6080, 7681, 8080, 9119, 22022},
	"svc-workflow": {5678},
}

func TestAllImages(t *testing.T) {
	if os.Getenv(EnvAllImages) != "1" {
		t.Skipf("set %s=1 (make test-images) to build and check all eight images", EnvAllImages)
	}
	b := sysimagetest.Builder(t)
	data := openData(t)
	p := &sysimage.Publisher{Docker: b.Docker, Store: data.Store, Registry: data.Registry, Logf: t.Logf}
	ctx, cancel := context.WithTimeout(context.Background(), sysimagetest.Timeout)
	defer cancel()
	pubs, err := sysimage.Release(ctx, b, p)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for _, pub := range pubs {
		sys, _ := template.SystemByName(pub.Release.Name)
		ports, ok := exposedPorts[sys.Name]
		if !ok {
			ports = []int{template.GatewayPort}
		}
		wantConfig(t, b.Docker, pub.Release.ImageRef, sys.Agent, ports...)
		refs[sys.Name] = pub.Release.ImageRef
	}

	for _, sys := range template.Catalog {
		if !sys.Gateway() {
			continue
		}
		t.Run(sys.Name+"/gateway", func(t *testing.T) {
			_, addr := run(t, b.Docker, refs[sys.Name], "SVC_GATEWAY_TOKEN=tok")
			var health struct {
				OK    bool   `json:"ok"`
				Agent string `json:"agent"`
			}
			getJSON(t, fmt.Sprintf("http://%s:3737/v1/health", addr), "tok", 20*time.Second, &health)
			if !health.OK || health.Agent != sys.Agent {
				t.Errorf("health %+v, want ok from %s", health, sys.Agent)
			}
		})
	}
	t.Run("svc-general/desktop-and-ssh", func(t *testing.T) { testGeneral(t, b.Docker, refs["svc-general"]) })
	t.Run("svc-general-alt/chromium", func(t *testing.T) {
		id, _ := run(t, b.Docker, refs["svc-general-alt"], "SVC_GATEWAY_TOKEN=tok")
		out := execIn(t, b.Docker, id, "chromium", "--headless", "--dump-dom", "data:text/html,<p>svc headless</p>")
		if !strings.Contains(out, "<p>svc headless</p>") {
			t.Errorf("headless chromium printed %q", out)
		}
	})
	t.Run("svc-workflow/n8n", func(t *testing.T) { testWorkflow(t, b.Docker, refs["svc-workflow"]) })
}

// testGeneral checks the desktop chain (noVNC's page on 6080 and, through
// its WebSocket bridge, the VNC server's greeting) and an SSH login with a
// key given in SVC_SSH_AUTHORIZED_KEYS, which lands root in the agent's home.
func testGeneral(t *testing.T, c *client.Client, ref string) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := run(t, c, ref, "SVC_GATEWAY_TOKEN=tok", "SVC_SSH_AUTHORIZED_KEYS="+string(ssh.MarshalAuthorizedKey(sshPub)))

	page := poll(t, fmt.Sprintf("http://%s:6080/", addr), 30*time.Second)
	if !strings.Contains(page, "noVNC") {
		t.Errorf("6080/ is not noVNC's page: %.200q", page)
	}
	var banner string
	deadline := time.Now().Add(30 * time.Second)
	for banner == "" && time.Now().Before(deadline) {
		banner, err = rfbBanner(addr.String())
		if err != nil {
			time.Sleep(300 * time.Millisecond)
		}
	}
	if !strings.HasPrefix(banner, "RFB 003.") {
		t.Errorf("no VNC greeting through noVNC's bridge: %q (%v)", banner, err)
	}

	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second}
	var conn *ssh.Client
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if conn, err = ssh.Dial("tcp", net.JoinHostPort(addr.String(), "22022"), cfg); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	defer conn.Close()
	sess, err := conn.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.Output("id -u; pwd")
	if err != nil || string(out) != "0\n/home/user\n" {
		t.Errorf("ssh session: %q (%v), want root in /home/user", out, err)
	}
}

// rfbBanner opens noVNC's WebSocket on 6080 and reads the VNC server's
// protocol version line.
func rfbBanner(host string) (string, error) {
	cfg, err := websocket.NewConfig("ws://"+host+":6080/websockify", "http://"+host+":6080/")
	if err != nil {
		return "", err
	}
	cfg.Protocol = []string{"binary"}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	ws.PayloadType = websocket.BinaryFrame
	ws.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 12)
	if _, err := io.ReadFull(ws, buf); err != nil {
		return "", err
	}
	return string(buf), nil
}

// testWorkflow waits for n8n on 5678 (its first boot migrates a database)
// and checks its data is on the home the instance disk holds.
func testWorkflow(t *testing.T, c *client.Client, ref string) {
	id, addr := run(t, c, ref, "SVC_INSTANCE_URL=http://test.localhost:7070")
	health := poll(t, fmt.Sprintf("http://%s:5678/healthz", addr), 4*time.Minute)
	if !strings.Contains(health, `"ok"`) {
		t.Errorf("/healthz: %q", health)
	}
	page := poll(t, fmt.Sprintf("http://%s:5678/", addr), 30*time.Second)
	if !strings.Contains(page, "n8n") {
		t.Errorf("5678/ is not n8n's editor: %.200q", page)
	}
	owner := execIn(t, c, id, "stat", "-c", "%U", "/home/node/.n8n")
	if strings.TrimSpace(owner) != "node" {
		t.Errorf("/home/node/.n8n belongs to %q, want node", owner)
	}
	// n8n and its task runner: every process running n8n's code is node's.
	var n8n []string
	for _, line := range strings.Split(execIn(t, c, id, "ps", "-eo", "user=,args="), "\n") {
		if strings.Contains(line, "/opt/n8n/") {
			n8n = append(n8n, line)
		}
	}
	for _, line := range n8n {
		if !strings.HasPrefix(line, "node ") {
			t.Errorf("an n8n process is not node's: %q", line)
		}
	}
	if len(n8n) == 0 {
		t.Error("no n8n process")
	}
}

// poll GETs url until it answers 200 and returns the body.
func poll(t *testing.T, url string, wait time.Duration) string {
	t.Helper()
	var last error
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
		if err != nil {
			last = err
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return string(body)
		}
		last = fmt.Errorf("status %d", resp.StatusCode)
	}
	t.Fatalf("GET %s: no answer within %s: %v", url, wait, last)
	return ""
}
