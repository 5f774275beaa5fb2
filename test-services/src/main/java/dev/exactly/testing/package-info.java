/**
 * Test support: finds the PostgreSQL and Redis servers tests talk to, or starts embedded ones on a
 * machine that has none. With {@code CI=true} a missing server is an error, never a silent skip.
 */
@NullMarked
package dev.exactly.testing;

import org.jspecify.annotations.NullMarked;
