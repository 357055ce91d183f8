// SPDX-License-Identifier: MIT
// An NIO echo server with Netty's boss/worker shape, for the server tests:
// one acceptor thread ("boss") accepts in blocking mode and deals each
// SocketChannel in strict rotation to WORKERS worker threads; each worker
// owns a Selector and registers the channels handed to it from its own
// thread (as Netty's event loops do), then echoes what it reads.
//   java EchoServer PORT WORKERS
// Listens on 127.0.0.1:PORT; prints "listening PORT" once ready; every
// failure is printed as a line starting with "error".
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;

public final class EchoServer {
    static final class Worker extends Thread {
        final Selector selector;
        final ConcurrentLinkedQueue<SocketChannel> pending = new ConcurrentLinkedQueue<>();

        Worker(int i) throws IOException {
            super("worker-" + i);
            selector = Selector.open();
        }

        void hand(SocketChannel ch) {
            pending.add(ch);
            selector.wakeup();
        }

        @Override
        public void run() {
            try {
                for (;;) {
                    selector.select();
                    SocketChannel ch;
                    while ((ch = pending.poll()) != null) {
                        ch.configureBlocking(false);
                        ch.register(selector, SelectionKey.OP_READ, ByteBuffer.allocate(16384));
                    }
                    Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                    while (it.hasNext()) {
                        SelectionKey k = it.next();
                        it.remove();
                        serve(k);
                    }
                }
            } catch (IOException e) {
                System.out.println("error: " + getName() + ": " + e);
            }
        }

        static void serve(SelectionKey k) {
            SocketChannel ch = (SocketChannel) k.channel();
            ByteBuffer buf = (ByteBuffer) k.attachment();
            try {
                if (k.isReadable()) {
                    int n = ch.read(buf);
                    if (n < 0) {
                        k.cancel();
                        ch.close();
                        return;
                    }
                }
                buf.flip();
                ch.write(buf);
                buf.compact();
                // Bytes left unwritten: wait until the socket takes more.
                k.interestOps(buf.position() > 0 ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
            } catch (IOException e) {
                // A client resetting its connection is not the server's error.
                k.cancel();
                try {
                    ch.close();
                } catch (IOException ignored) {
                }
            }
        }
    }

    public static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        Worker[] workers = new Worker[n];
        for (int i = 0; i < n; i++) {
            workers[i] = new Worker(i);
            workers[i].start();
        }
        Thread.currentThread().setName("boss");
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", port), 1024);
        System.out.println("listening " + port);
        System.out.flush();
        long k = 0;
        for (;;) {
            SocketChannel ch = server.accept();
            workers[(int) (k++ % n)].hand(ch);
        }
    }
}
