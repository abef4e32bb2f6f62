package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat; 100 on
// every Linux architecture Go supports.
const clockTicks = 100

const sampleEvery = 20 * time.Millisecond

// sampler follows the provider processes terraform starts (its direct
// children whose name begins with "terraform-provi", the 15-byte comm of
// terraform-provider-*) and keeps, per process, the last CPU time and the
// peak RSS (VmHWM) it saw. A process's CPU after its last sample is lost:
// at most one sampling interval per provider process.
type sampler struct {
	parent int
	done   chan struct{}
	wg     sync.WaitGroup

	mu   sync.Mutex
	cpu  map[int]float64
	peak map[int]int64
	anon map[int]int64 // largest RssAnon seen: the process's own memory, without the mapped binary
}

func startSampler(parent int) *sampler {
	s := &sampler{parent: parent, done: make(chan struct{}), cpu: map[int]float64{}, peak: map[int]int64{}, anon: map[int]int64{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends sampling and returns the providers' total CPU seconds, their
// largest peak RSS (VmHWM) and largest sampled anonymous RSS in bytes, and
// how many provider processes ran.
func (s *sampler) stop() (cpu float64, peak, anon int64, procs int) {
	close(s.done)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid, c := range s.cpu {
		cpu += c
		peak = max(peak, s.peak[pid])
		anon = max(anon, s.anon[pid])
	}
	return cpu, peak, anon, len(s.cpu)
}

func (s *sampler) sample() {
	for _, pid := range children(s.parent) {
		comm, cpu, ok := procCPU(pid)
		if !ok || !strings.HasPrefix(comm, "terraform-provi") {
			continue
		}
		hwm, anon := procMem(pid)
		s.mu.Lock()
		s.cpu[pid] = max(s.cpu[pid], cpu)
		s.peak[pid] = max(s.peak[pid], hwm)
		s.anon[pid] = max(s.anon[pid], anon)
		s.mu.Unlock()
	}
}

// children lists the direct children of pid, from every thread's children
// file (Linux 3.5+ with CONFIG_PROC_CHILDREN, which Debian kernels have).
func children(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(field); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// procCPU returns the comm and the user+system CPU seconds of pid.
func procCPU(pid int) (string, float64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(data)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, false
	}
	comm := s[open+1 : closing]
	// Fields after the comm start at field 3 (state); utime and stime are
	// fields 14 and 15.
	f := strings.Fields(s[closing+1:])
	if len(f) < 13 {
		return "", 0, false
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return comm, (ut + st) / clockTicks, true
}

// procMem returns the peak resident set size of pid (VmHWM, which counts
// the mapped pages of the binary too) and its current anonymous resident
// memory (RssAnon: heap, stacks, runtime), both in bytes.
func procMem(pid int) (hwm, anon int64) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	kb := func(rest string) int64 {
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		v, _ := strconv.ParseInt(f[0], 10, 64)
		return v * 1024
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm = kb(rest)
		} else if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			anon = kb(rest)
		}
	}
	return hwm, anon
}
