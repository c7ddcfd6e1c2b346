package main

import (
	"context"
	"errors"

	"golang.org/x/sys/unix"
)

// scrollKey is a key that scrolls the table mode's view.
type scrollKey int

const (
	keyUp scrollKey = iota
	keyDown
	keyPageUp
	keyPageDown
	keyHome
	keyEnd
)

// readKeys reads the keys typed on the terminal fd while a live query runs and calls
// scroll with each one that scrolls, until ctx ends. Between prompts readline reads
// nothing, and the terminal is in its normal mode: readKeys turns off line buffering
// and echo for the query's time, but keeps Ctrl-C a signal, which ends the query. It
// polls rather than blocks, so that it reads no byte after ctx ends: what is typed
// then is the next prompt's.
func readKeys(ctx context.Context, fd int, scroll func(scrollKey)) error {
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	raw := *saved
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return err
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, saved)
	var pending []byte // an escape sequence read in part
	buf := make([]byte, 64)
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 || fds[0].Revents&unix.POLLIN == 0 {
			if fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
				return nil
			}
			continue
		}
		n, err = unix.Read(fd, buf)
		if err != nil || n == 0 {
			return err
		}
		pending = parseKeys(append(pending, buf[:n]...), scroll)
	}
	return nil
}

// parseKeys calls scroll for each scrolling key in in: the arrows, Page Up and Down,
// Home and End as terminals send them, and j, k, space, b, g and G as in a pager. It
// returns what is left of an escape sequence cut short at the end of in.
func parseKeys(in []byte, scroll func(scrollKey)) []byte {
	for len(in) > 0 {
		if in[0] != 0x1b {
			switch in[0] {
			case 'k':
				scroll(keyUp)
			case 'j':
				scroll(keyDown)
			case 'b':
				scroll(keyPageUp)
			case ' ':
				scroll(keyPageDown)
			case 'g':
				scroll(keyHome)
			case 'G':
				scroll(keyEnd)
			}
			in = in[1:]
			continue
		}
		// ESC [ x, ESC O x, or ESC [ n ~
		if len(in) < 3 {
			return in
		}
		if in[1] != '[' && in[1] != 'O' {
			in = in[1:]
			continue
		}
		switch in[2] {
		case 'A':
			scroll(keyUp)
		case 'B':
			scroll(keyDown)
		case 'H':
			scroll(keyHome)
		case 'F':
			scroll(keyEnd)
		case '1', '4', '5', '6', '7', '8':
			if len(in) < 4 {
				return in
			}
			if in[3] == '~' {
				switch in[2] {
				case '5':
					scroll(keyPageUp)
				case '6':
					scroll(keyPageDown)
				case '1', '7':
					scroll(keyHome)
				case '4', '8':
					scroll(keyEnd)
				}
				in = in[4:]
				continue
			}
		}
		in = in[3:]
	}
	return nil
}
