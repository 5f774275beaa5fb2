/**
 * The store benchmark (JMH): a guarded operation (claim and complete on a fresh key) and a replay on
 * each store, against one raw set-if-absent round trip on the same server.
 */
@NullMarked
package dev.exactly.benchmarks.store;

import org.jspecify.annotations.NullMarked;
