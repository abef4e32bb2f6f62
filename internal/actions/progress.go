package actions

import (
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
)

// progressEvery is how often a wait that keeps getting the same answer says
// so; a changed answer is reported at once.
const progressEvery = 10 * time.Second

// progress sends an action's progress messages, and turns the failed
// attempts of a wait (one a second) into a message when the answer changes
// or progressEvery has passed.
type progress struct {
	send func(string)

	start      time.Time
	lastAnswer string
	lastSent   time.Time
	now        func() time.Time
}

func newProgress(send func(action.InvokeProgressEvent)) *progress {
	p := &progress{now: time.Now}
	p.start = p.now()
	p.send = func(msg string) {
		p.lastSent = p.now()
		if send != nil {
			send(action.InvokeProgressEvent{Message: msg})
		}
	}
	return p
}

// retrying implements spireexec.Server.OnRetry.
func (p *progress) retrying(err error) {
	answer := err.Error()
	now := p.now()
	if answer == p.lastAnswer && now.Sub(p.lastSent) < progressEvery {
		return
	}
	p.lastAnswer = answer
	p.send(fmt.Sprintf("Still trying after %s: %s", now.Sub(p.start).Round(time.Second), answer))
}
