/**
 * The HTTP answers of the service, shared by its web adapters ({@code api}, {@code security}, {@code demo}):
 * {@link dev.exactly.payments.web.ApiResponse} (status, media type, exact bytes, what the hot tier may record),
 * the one factory of problem documents {@link dev.exactly.payments.web.ApiProblems}, and
 * {@link dev.exactly.payments.web.ApiException} for an answer decided before a handler returns. Business
 * packages never use these: they return business results, which {@code api} turns into answers.
 */
@NullMarked
package dev.exactly.payments.web;

import org.jspecify.annotations.NullMarked;
