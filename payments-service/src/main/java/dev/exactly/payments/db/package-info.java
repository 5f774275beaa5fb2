/** A small JDBC command template and transaction helper. */
@NullMarked
package dev.exactly.payments.db;

import org.jspecify.annotations.NullMarked;
