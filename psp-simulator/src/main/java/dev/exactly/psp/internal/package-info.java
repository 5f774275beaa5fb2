/** Implementation details of the PSP simulator (JSON, the charge book, HTTP handlers); not API. */
@NullMarked
package dev.exactly.psp.internal;

import org.jspecify.annotations.NullMarked;
