// Package tests holds the end-to-end tests: golden files run through a session
// (testdata/*.txt), differential tests against SQLite, and tests that run the shipped
// example queries through the real command.
package tests
