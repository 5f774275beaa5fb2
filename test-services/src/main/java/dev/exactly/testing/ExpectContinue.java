package dev.exactly.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A client of {@code Expect: 100-continue} (RFC 9110 §10.1.1) on a raw socket: sends a request's head and reads
 * the response heads that come back, so that a test sees whether the server invited the body before answering.
 */
public final class ExpectContinue {
    private ExpectContinue() {}

    /** Sends the head of a JSON POST that expects 100-continue, with {@code headers}; returns the socket. */
    public static Socket head(int port, String path, String headers, long contentLength) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), port), 5_000);
        socket.setSoTimeout(20_000);
        String head = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Expect: 100-continue\r\nContent-Length: " + contentLength + "\r\n" + headers + "\r\n";
        socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
        return socket;
    }

    /** Reads one response head, through its blank line. */
    public static String responseHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        byte[] end = {'\r', '\n', '\r', '\n'};
        int matched = 0;
        while (matched < end.length) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }
}
