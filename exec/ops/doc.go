// Package ops holds the operators that run inside tasks: filter, project and the
// updating group aggregate. Each is an exec.Operator built from a plan node's
// expressions; the task that runs it owns its channels.
package ops
