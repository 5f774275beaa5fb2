/** The HTTP adapter: authentication, controllers, problem+json errors. */
@NullMarked
package dev.exactly.payments.api;

import org.jspecify.annotations.NullMarked;
