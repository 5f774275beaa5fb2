package dev.exactly.idempotency;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The headers of a {@link StoredResponse}: lower-cased names in order, each with its values, immutable.
 * Held as one array of names and values, because a store keeps one per record for as long as the record
 * lives: an insertion-ordered map wrapped unmodifiable took four objects and about 220 bytes for a single
 * header (the map, its table, its entry, the wrapper), this two and about 50.
 */
final class ResponseHeaders extends AbstractMap<String, List<String>> {
    private static final ResponseHeaders EMPTY = new ResponseHeaders(new Object[0]);
    /** Up to this many headers, a name is looked up by comparing it with each. */
    private static final int LINEAR_SEARCH_MAX = 16;

    /** Name ({@code String}), values ({@code List<String>}, immutable), name, values... */
    private final Object[] pairs;

    private ResponseHeaders(Object[] pairs) {
        this.pairs = pairs;
    }

    /**
     * Names lower-cased ({@link Locale#ROOT}); names differing only in case become one header whose values
     * follow each other in the order given; every list of values copied.
     */
    static ResponseHeaders copyOf(Map<String, List<String>> headers) {
        if (headers instanceof ResponseHeaders already) {
            return already;
        }
        int size = headers.size();
        if (size == 0) {
            return EMPTY;
        }
        Builder out = new Builder(size);
        for (Map.Entry<String, List<String>> header : headers.entrySet()) {
            out.add(header.getKey(), List.copyOf(header.getValue()));
        }
        return out.build();
    }

    /**
     * The headers given as names and values in turn ({@code name, value, name, value...}): the same as
     * {@link #copyOf} of the map those pairs make, names lower-cased and a name that comes again adding its value.
     *
     * @throws IllegalArgumentException an odd number of elements
     * @throws NullPointerException     a null name or value
     */
    static ResponseHeaders ofPairs(String[] namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("headers as pairs hold an even number of elements");
        }
        if (namesAndValues.length == 0) {
            return EMPTY;
        }
        Builder out = new Builder(namesAndValues.length / 2);
        for (int i = 0; i < namesAndValues.length; i += 2) {
            out.add(namesAndValues[i], List.of(namesAndValues[i + 1]));
        }
        return out.build();
    }

    /** Headers added one name at a time, in order. */
    private static final class Builder {
        private Object[] pairs;
        private int filled;
        /** The names seen so far are compared one by one, unless there are many of them. */
        private final @Nullable Map<String, Integer> index;

        Builder(int expected) {
            pairs = new Object[2 * expected];
            index = expected > LINEAR_SEARCH_MAX ? new HashMap<>() : null;
        }

        void add(String givenName, List<String> values) {
            String name = givenName.toLowerCase(Locale.ROOT);
            int earlier = index == null ? indexOf(pairs, filled, name) : index.getOrDefault(name, -1);
            if (earlier >= 0) {
                if (pairs[earlier + 1] instanceof Merged merged) {
                    merged.addAll(values);
                } else {
                    @SuppressWarnings("unchecked")
                    List<String> first = (List<String>) pairs[earlier + 1];
                    Merged merged = new Merged(first);
                    merged.addAll(values);
                    pairs[earlier + 1] = merged;
                }
                return;
            }
            if (index != null) {
                index.put(name, filled);
            }
            if (filled == pairs.length) { // a map that grew while it was read
                pairs = Arrays.copyOf(pairs, 2 * filled);
            }
            pairs[filled++] = name;
            pairs[filled++] = values;
        }

        ResponseHeaders build() {
            for (int i = 1; i < filled; i += 2) {
                if (pairs[i] instanceof Merged merged) {
                    pairs[i] = List.copyOf(merged);
                }
            }
            return new ResponseHeaders(filled == pairs.length ? pairs : Arrays.copyOf(pairs, filled));
        }
    }

    /**
     * The values of a name that came again, gathered while the headers are built and made immutable once they
     * are: a name given once per value (a store's pairs) costs one list, not a copy of all its values so far each
     * time (20,000 values of one name took 1.5 s that way).
     */
    private static final class Merged extends ArrayList<String> {
        Merged(List<String> first) {
            super(first);
        }
    }

    /** Where {@code name} stands among the first {@code filled} slots of {@code pairs}, or -1. */
    private static int indexOf(Object[] pairs, int filled, Object name) {
        for (int i = 0; i < filled; i += 2) {
            if (pairs[i].equals(name)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public int size() {
        return pairs.length / 2;
    }

    @Override
    public boolean isEmpty() {
        return pairs.length == 0;
    }

    @Override
    public boolean containsKey(Object name) {
        return indexOf(pairs, pairs.length, name) >= 0;
    }

    /** A name compared with each: a response has a handful of headers. */
    @Override
    @SuppressWarnings("unchecked")
    public @Nullable List<String> get(Object name) {
        int at = indexOf(pairs, pairs.length, name);
        return at < 0 ? null : (List<String>) pairs[at + 1];
    }

    @Override
    @SuppressWarnings("unchecked")
    public void forEach(BiConsumer<? super String, ? super List<String>> action) {
        for (int i = 0; i < pairs.length; i += 2) {
            action.accept((String) pairs[i], (List<String>) pairs[i + 1]);
        }
    }

    @Override
    public Set<Entry<String, List<String>>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public int size() {
                return pairs.length / 2;
            }

            @Override
            public Iterator<Entry<String, List<String>>> iterator() {
                return new Iterator<>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next < pairs.length;
                    }

                    @Override
                    @SuppressWarnings("unchecked")
                    public Entry<String, List<String>> next() {
                        if (next >= pairs.length) {
                            throw new NoSuchElementException();
                        }
                        int at = next;
                        next += 2;
                        return Map.entry((String) pairs[at], (List<String>) pairs[at + 1]);
                    }
                };
            }
        };
    }

    @Override
    public List<String> put(String name, List<String> value) {
        throw immutable();
    }

    @Override
    public List<String> remove(Object name) {
        throw immutable();
    }

    @Override
    public void putAll(Map<? extends String, ? extends List<String>> headers) {
        throw immutable();
    }

    @Override
    public void clear() {
        throw immutable();
    }

    private static UnsupportedOperationException immutable() {
        return new UnsupportedOperationException("a stored response's headers do not change");
    }
}
