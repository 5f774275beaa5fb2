/**
 * What the checkout page at {@code /} needs beyond the API: whether the service runs in demo mode (and
 * with which demo keys), and the demo switches of the in-process processor stand-in. Nothing here exists
 * outside demo mode.
 */
@NullMarked
package dev.exactly.payments.demo;

import org.jspecify.annotations.NullMarked;
