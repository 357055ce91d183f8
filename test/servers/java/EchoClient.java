// SPDX-License-Identifier: MIT
// The echo server's client, for the server tests: opens CONNS connections
// to 127.0.0.1:PORT (all before any data flows), then for SECONDS seconds
// THREADS threads each send a distinct message of 1..4096 bytes on each of
// their connections in turn and check that exactly those bytes come back.
//   java EchoClient PORT CONNS THREADS SECONDS
// Prints "client: conns=C connected=K echoes=E bytes=B errors=X"; every
// error (refused connection, timeout, short or wrong echo) counts once.
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

public final class EchoClient {
    static final AtomicLong errors = new AtomicLong(), echoes = new AtomicLong(), bytes = new AtomicLong();

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int conns = Integer.parseInt(args[1]);
        int threads = Integer.parseInt(args[2]);
        long end = System.nanoTime() + Long.parseLong(args[3]) * 1_000_000_000L;
        Socket[] socks = new Socket[conns];
        int connected = 0;
        for (int i = 0; i < conns; i++) {
            try {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                s.setSoTimeout(5000);
                s.setTcpNoDelay(true);
                socks[i] = s;
                connected++;
            } catch (IOException e) {
                errors.incrementAndGet();
                System.out.println("error: connect " + i + ": " + e);
            }
        }
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int first = t;
            ts[t] = new Thread(() -> run(socks, first, threads, end));
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        for (Socket s : socks) if (s != null) s.close();
        System.out.println("client: conns=" + conns + " connected=" + connected + " echoes=" + echoes.get()
                + " bytes=" + bytes.get() + " errors=" + errors.get());
        System.exit(errors.get() == 0 && connected == conns ? 0 : 1);
    }

    static void run(Socket[] socks, int first, int step, long end) {
        byte[] out = new byte[4096], in = new byte[4096];
        long round = 0;
        while (System.nanoTime() < end) {
            for (int i = first; i < socks.length && System.nanoTime() < end; i += step) {
                Socket s = socks[i];
                if (s == null) continue;
                int len = 1 + (int) ((round * 131 + i * 17) % 4096);
                for (int j = 0; j < len; j++) out[j] = (byte) (i * 31 + j + round);
                try {
                    OutputStream os = s.getOutputStream();
                    InputStream is = s.getInputStream();
                    os.write(out, 0, len);
                    int got = 0;
                    while (got < len) {
                        int n = is.read(in, got, len - got);
                        if (n < 0) throw new IOException("connection closed after " + got + " of " + len + " bytes");
                        got += n;
                    }
                    if (!Arrays.equals(out, 0, len, in, 0, len)) throw new IOException("echo differs");
                    echoes.incrementAndGet();
                    bytes.addAndGet(len);
                } catch (IOException e) {
                    errors.incrementAndGet();
                    System.out.println("error: connection " + i + ": " + e);
                    try {
                        s.close();
                    } catch (IOException ignored) {
                    }
                    socks[i] = null;
                }
            }
            round++;
        }
    }
}
