package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
)

// The go-plugin handshake Terraform uses: without this cookie a provider
// binary refuses to serve.
const (
	magicCookieKey   = "TF_PLUGIN_MAGIC_COOKIE"
	magicCookieValue = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"
	schemaSamples    = 15
)

// ProcessCost is one provider binary's fixed cost.
type ProcessCost struct {
	Target         string    `json:"target"`
	BinaryBytes    int64     `json:"binary_bytes"`
	Protocol       string    `json:"protocol"`
	SchemaMedianMs float64   `json:"start_to_schema_median_ms"`
	SchemaSamples  []float64 `json:"start_to_schema_ms"`
	SchemaBytes    int       `json:"schema_response_bytes"`
	IdleRSSBytes   int64     `json:"rss_after_schema_bytes"`
	Error          string    `json:"error,omitempty"`
}

func measureProcesses(ctx context.Context, e *tfEnv) []ProcessCost {
	var out []ProcessCost
	for _, t := range []string{targetZerotrust, targetPluginFloor, targetKubernetes, targetKubectl} {
		p, ok := e.providers[t]
		if !ok {
			continue
		}
		pc := ProcessCost{Target: t}
		if st, err := os.Stat(p.bin); err == nil {
			pc.BinaryBytes = st.Size()
		}
		for i := 0; i < schemaSamples; i++ {
			d, proto, n, rss, err := startToSchema(ctx, p.bin, e.work)
			if err != nil {
				pc.Error = err.Error()
				break
			}
			pc.Protocol, pc.SchemaBytes, pc.IdleRSSBytes = proto, n, rss
			pc.SchemaSamples = append(pc.SchemaSamples, float64(d.Microseconds())/1000)
		}
		pc.SchemaMedianMs = median(pc.SchemaSamples)
		out = append(out, pc)
	}
	return out
}

// rawCodec passes message bytes through unchanged: the benchmark needs no
// generated protobuf types to send an empty request and time the answer.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: want *[]byte, got %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: want *[]byte, got %T", v)
	}
	*b = data.Materialize()
	return nil
}

// startToSchema starts a provider binary as Terraform does (go-plugin
// handshake on its stdout, gRPC on a Unix socket, no mTLS since no client
// certificate is offered) and times process start to a complete
// GetProviderSchema (protocol 6) or GetSchema (protocol 5) response. It
// returns that time, the protocol, the response size and the process's RSS
// after answering.
func startToSchema(ctx context.Context, bin, work string) (time.Duration, string, int, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tmp, err := os.MkdirTemp(work, "plugin-")
	if err != nil {
		return 0, "", 0, 0, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = []string{
		magicCookieKey + "=" + magicCookieValue,
		"PLUGIN_PROTOCOL_VERSIONS=5,6",
		"PLUGIN_MIN_PORT=10000", "PLUGIN_MAX_PORT=25000",
		"TMPDIR=" + tmp,
		"HOME=" + tmp,
		"PATH=" + os.Getenv("PATH"),
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, "", 0, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, "", 0, 0, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return 0, "", 0, 0, fmt.Errorf("%s: reading the handshake: %w", filepath.Base(bin), err)
	}
	// CORE-PROTOCOL|APP-PROTOCOL|NETWORK|ADDRESS|grpc[|CERT]
	f := strings.Split(strings.TrimSpace(line), "|")
	if len(f) < 5 || f[4] != "grpc" {
		return 0, "", 0, 0, fmt.Errorf("%s: unexpected handshake %q", filepath.Base(bin), line)
	}
	var target, method string
	switch f[2] {
	case "unix":
		target = "unix://" + f[3]
	case "tcp":
		target = f[3]
	default:
		return 0, "", 0, 0, fmt.Errorf("%s: network %q", filepath.Base(bin), f[2])
	}
	switch f[1] {
	case "6":
		method = "/tfplugin6.Provider/GetProviderSchema"
	case "5":
		method = "/tfplugin5.Provider/GetSchema"
	default:
		return 0, "", 0, 0, fmt.Errorf("%s: protocol %q", filepath.Base(bin), f[1])
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		return 0, "", 0, 0, err
	}
	defer conn.Close()
	req, resp := []byte{}, []byte{}
	if err := conn.Invoke(ctx, method, &req, &resp); err != nil {
		return 0, "", 0, 0, fmt.Errorf("%s: %s: %w", filepath.Base(bin), method, err)
	}
	d := time.Since(start)
	hwm, _ := procMem(cmd.Process.Pid)
	return d, f[1], len(resp), hwm, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
