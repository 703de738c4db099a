package dev.privagg.sim;

import dev.privagg.io.KafkaConnection;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;

/**
 * A real single-node KRaft broker (combined broker and controller, Kafka's own {@link
 * KafkaRaftServer}) inside this JVM whose data lives in a directory that outlives it: a later start
 * on the same directory has the same cluster id, topics and records. Unlike {@link EmbeddedKafka}
 * (a test kit cluster in a temporary directory, deleted on close), this is what {@code privagg run}
 * uses without a broker of its own, so that the ledger topic, and with it the spent privacy budget,
 * survives a restart.
 *
 * <p>The directory holds a lock file, held while the broker runs (a second broker on the same
 * directory would recover the first one's metadata log under it, and the first would halt), and the
 * broker's log directory {@code data/}.
 *
 * <p>The broker listens on {@code localhost:port} only. Its controller listens on a free loopback
 * port chosen at each start: with a static voter set (kraft.version 0) the voters come from the
 * configuration, not from the metadata log, so the port may change between starts.
 *
 * <p>A kill -9 loses nothing the broker acknowledged (the OS page cache holds its writes; only a
 * power loss before the OS flushes could); the next start recovers the logs. A fatal broker fault
 * ends the JVM, as it ends a stand-alone broker.
 */
public final class PersistentKafka implements AutoCloseable {
  /** The broker's node id; also the controller's (combined mode). */
  static final int NODE_ID = 1;

  private static final String CONTROLLER_LISTENER = "CONTROLLER";
  private static final String META_PROPERTIES = "meta.properties";
  private static final String LOCK_FILE = "broker.lock";
  private static final String LOG_DIR = "data";
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  private final KafkaRaftServer server;
  private final FileChannel lock;
  private final Path dir;
  private final int port;
  private final String clusterId;
  private final boolean formatted;
  private boolean closed;

  private PersistentKafka(
      KafkaRaftServer server,
      FileChannel lock,
      Path dir,
      int port,
      String clusterId,
      boolean formatted) {
    this.server = server;
    this.lock = lock;
    this.dir = dir;
    this.port = port;
    this.clusterId = clusterId;
    this.formatted = formatted;
  }

  /** The broker's port is taken by another process. */
  public static final class PortInUseException extends IllegalStateException {
    private static final long serialVersionUID = 1L;
    private final int port;

    PortInUseException(int port, Throwable cause) {
      super("localhost:" + port + " is already in use", cause);
      this.port = port;
    }

    public int port() {
      return port;
    }
  }

  /** Another broker (in this JVM or another process) runs on the directory. */
  public static final class DirectoryInUseException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    DirectoryInUseException(Path dir) {
      super(dir + " is in use by another embedded Kafka broker");
    }
  }

  /** Whether {@code dir} holds a broker an earlier start formatted (its data to continue). */
  public static boolean holdsBroker(Path dir) {
    return Files.exists(dir.toAbsolutePath().normalize().resolve(LOG_DIR).resolve(META_PROPERTIES));
  }

  /**
   * Starts the broker on {@code localhost:port} with its data in {@code dir}, formatting its log
   * directory first only when it holds no broker yet; returns when the broker answers clients.
   *
   * @throws DirectoryInUseException when another broker runs on {@code dir}
   * @throws PortInUseException when another process listens on the port
   * @throws IllegalStateException when the log directory holds files but no broker
   */
  public static PersistentKafka start(Path dir, int port) throws Exception {
    if (!(port >= 1 && port <= 65535)) {
      throw new IllegalArgumentException("port must be in [1, 65535], was " + port);
    }
    Path home = dir.toAbsolutePath().normalize();
    Files.createDirectories(home);
    FileChannel lock = lock(home);
    try {
      requireFree(port);
      Path logDir = home.resolve(LOG_DIR);
      boolean formatted = false;
      if (!Files.exists(logDir.resolve(META_PROPERTIES))) {
        requireNoOtherData(logDir);
        format(logDir);
        formatted = true;
      }
      KafkaConfig config = new KafkaConfig(brokerConfig(logDir, port, freeLoopbackPort()), false);
      KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
      try {
        server.startup();
      } catch (Exception e) {
        stopQuietly(server);
        if (isBindFailure(e)) {
          throw new PortInUseException(port, e); // taken between the check and the bind
        }
        throw e;
      }
      PersistentKafka kafka =
          new PersistentKafka(server, lock, home, port, readClusterId(logDir), formatted);
      try {
        kafka.awaitReady();
      } catch (Exception e) {
        kafka.close();
        throw e;
      }
      return kafka;
    } catch (Exception e) {
      lock.close(); // idempotent: close() above may have released it already
      throw e;
    }
  }

  /** Holds the directory's lock file; the OS releases it when this process dies. */
  private static FileChannel lock(Path home) throws IOException {
    FileChannel channel =
        FileChannel.open(
            home.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    boolean locked;
    try {
      locked = channel.tryLock() != null;
    } catch (OverlappingFileLockException e) {
      locked = false; // held in this JVM
    }
    if (!locked) {
      channel.close();
      throw new DirectoryInUseException(home);
    }
    return channel;
  }

  public String bootstrapServers() {
    return "localhost:" + port;
  }

  /** A plaintext connection to this broker. */
  public KafkaConnection connection() {
    return KafkaConnection.to(bootstrapServers());
  }

  /** The directory given to {@link #start}, absolute. */
  public Path dir() {
    return dir;
  }

  public String clusterId() {
    return clusterId;
  }

  /** Whether this start formatted a new directory (false: it continued an earlier broker). */
  public boolean formatted() {
    return formatted;
  }

  /** Stops the broker (controlled shutdown: logs are flushed and closed cleanly). Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      server.shutdown();
      server.awaitShutdown();
    } finally {
      try {
        lock.close();
      } catch (IOException e) {
        // The OS releases the lock with the process at the latest.
      }
    }
  }

  private static void stopQuietly(KafkaRaftServer server) {
    try {
      server.shutdown();
      server.awaitShutdown();
    } catch (RuntimeException e) {
      // Best effort: the start already failed, and its exception says why.
    }
  }

  /** Fails early, naming the port, rather than deep inside the broker's startup. */
  private static void requireFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true); // as the broker's own acceptor: TIME_WAIT does not count
      socket.bind(new InetSocketAddress("localhost", port));
    } catch (IOException e) {
      throw new PortInUseException(port, e);
    }
  }

  private static int freeLoopbackPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("localhost"))) {
      return socket.getLocalPort();
    }
  }

  private static boolean isBindFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.net.BindException
          || String.valueOf(t.getMessage()).contains("Address already in use")) {
        return true;
      }
    }
    return false;
  }

  /**
   * A directory without meta.properties may be new, empty, or left by a format that died before
   * writing meta.properties (it writes bootstrap.checkpoint first); anything else is not ours.
   */
  private static void requireNoOtherData(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> files = Files.list(dir)) {
      List<String> others =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> !Set.of("bootstrap.checkpoint", ".lock").contains(n))
              .sorted()
              .toList();
      if (!others.isEmpty()) {
        throw new IllegalStateException(
            dir
                + " holds files ("
                + String.join(", ", others.subList(0, Math.min(5, others.size())))
                + ") but no "
                + META_PROPERTIES
                + ", so it is not a broker's data directory; move it away or pick another"
                + " directory");
      }
    }
  }

  /** Writes meta.properties with a new cluster id and the bootstrap metadata. */
  private static void format(Path dir) throws Exception {
    Files.createDirectories(dir);
    Formatter formatter =
        new Formatter()
            .setNodeId(NODE_ID)
            .setClusterId(Uuid.randomUuid().toString())
            .setDirectories(Set.of(dir.toString()))
            .setMetadataLogDirectory(dir.toString())
            .setControllerListenerName(CONTROLLER_LISTENER)
            .setPrintStream(new PrintStream(OutputStream.nullOutputStream()));
    formatter.run();
  }

  private static String readClusterId(Path dir) throws IOException {
    Properties meta = new Properties();
    try (var in = Files.newInputStream(dir.resolve(META_PROPERTIES))) {
      meta.load(in);
    }
    return meta.getProperty("cluster.id");
  }

  /** The configuration of a single-node combined broker; the same at every start. */
  static Map<String, Object> brokerConfig(Path dir, int port, int controllerPort) {
    Map<String, Object> props = new HashMap<>();
    props.put("process.roles", "broker,controller");
    props.put("node.id", Integer.toString(NODE_ID));
    props.put("controller.quorum.voters", NODE_ID + "@localhost:" + controllerPort);
    props.put(
        "listeners",
        "PLAINTEXT://localhost:"
            + port
            + ","
            + CONTROLLER_LISTENER
            + "://localhost:"
            + controllerPort);
    props.put("advertised.listeners", "PLAINTEXT://localhost:" + port);
    props.put("controller.listener.names", CONTROLLER_LISTENER);
    props.put("inter.broker.listener.name", "PLAINTEXT");
    props.put(
        "listener.security.protocol.map",
        "PLAINTEXT:PLAINTEXT," + CONTROLLER_LISTENER + ":PLAINTEXT");
    props.put("log.dirs", dir.toString());
    props.put("metadata.log.dir", dir.toString());
    props.put("num.partitions", "1");
    props.put("offsets.topic.replication.factor", "1");
    props.put("transaction.state.log.replication.factor", "1");
    props.put("transaction.state.log.min.isr", "1");
    props.put("share.coordinator.state.topic.replication.factor", "1");
    props.put("share.coordinator.state.topic.min.isr", "1");
    props.put("group.initial.rebalance.delay.ms", "0");
    // Topics only as the job creates them: an auto-created updates topic would have CreateTime
    // timestamps, which the job refuses.
    props.put("auto.create.topics.enable", "false");
    // As deploy/local's broker: room for large models (the job sets each topic's own limit).
    props.put("message.max.bytes", Integer.toString(64 << 20));
    // The compacted topics hold one key per job: the cleaner's 128 MiB default buffer would only
    // take heap from the job running beside it.
    props.put("log.cleaner.dedupe.buffer.size", Integer.toString(16 << 20));
    return props;
  }

  /** Waits until the broker answers a client (registered, unfenced, metadata published). */
  private void awaitReady() throws Exception {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    try (Admin admin = Admin.create(props)) {
      long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
      Exception last = null;
      while (System.nanoTime() < deadline) {
        try {
          if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
            return;
          }
        } catch (java.util.concurrent.ExecutionException
            | java.util.concurrent.TimeoutException e) {
          last = e;
        }
        Thread.sleep(100);
      }
      throw new IllegalStateException(
          "the embedded Kafka broker at "
              + bootstrapServers()
              + " did not answer within "
              + READY_TIMEOUT.toSeconds()
              + " s",
          last);
    }
  }
}
