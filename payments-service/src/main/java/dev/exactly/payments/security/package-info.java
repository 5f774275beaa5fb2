/**
 * Who may call what: API keys as Spring Security authentications, access decided by Spring Security on
 * the path the dispatcher routes (its firewall refuses encoded separators, matrix parameters, {@code //}
 * and dot segments first), and every refusal written as a problem document.
 */
@NullMarked
package dev.exactly.payments.security;

import org.jspecify.annotations.NullMarked;
