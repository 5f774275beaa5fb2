/**
 * The HTTP adapter: controllers, and the only place where business results become HTTP answers and
 * problem documents ({@code Answers}); it renders resources and the answers charges and refunds record.
 */
@NullMarked
package dev.exactly.payments.api;

import org.jspecify.annotations.NullMarked;
