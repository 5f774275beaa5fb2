/** Background work of the service's own: tasks run on a schedule. */
@NullMarked
package dev.exactly.payments.tasks;

import org.jspecify.annotations.NullMarked;
