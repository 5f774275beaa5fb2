/**
 * Test support: finds the PostgreSQL and Redis servers tests talk to, or starts embedded ones on a
 * machine that has none (with {@code CI=true} a missing server is an error, never a silent skip), and a
 * scripted HTTP server that records what clients send.
 */
@NullMarked
package dev.exactly.testing;

import org.jspecify.annotations.NullMarked;
