/**
 * Plain Java uses of Exactly: a charge server guarded by the engine (the README's "Guarding an action"), and
 * a shipment service on the transactional API (the README's "Atomic phases").
 */
@NullMarked
package dev.exactly.examples.plain;

import org.jspecify.annotations.NullMarked;
