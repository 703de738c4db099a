package dev.privagg.io;

import java.io.IOException;
import java.io.Reader;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;

/**
 * How every Kafka client privagg creates reaches the brokers: the bootstrap servers plus the
 * connection and security properties of a {@code --kafka-properties} file ({@code
 * security.protocol}, {@code sasl.*}, {@code ssl.*} and a few socket settings). Every other client
 * property stays privagg's own: a file cannot turn the job's {@code read_committed} reads or
 * transactions off. {@link #toString()} never shows a secret.
 */
public final class KafkaConnection implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Properties a file may set besides the {@code ssl.} and {@code sasl.} families. */
  private static final Set<String> ALLOWED =
      Set.of(
          "security.protocol",
          "client.dns.lookup",
          "socket.connection.setup.timeout.ms",
          "socket.connection.setup.timeout.max.ms",
          "reconnect.backoff.ms",
          "reconnect.backoff.max.ms",
          "connections.max.idle.ms",
          "request.timeout.ms",
          "metadata.max.age.ms");

  private final String bootstrapServers;
  private final Map<String, String> settings;

  private KafkaConnection(String bootstrapServers, Map<String, String> settings) {
    if (bootstrapServers == null || bootstrapServers.isBlank()) {
      throw new IllegalArgumentException(
          "bootstrap servers must be given as HOST:PORT[,HOST:PORT...], was empty");
    }
    this.bootstrapServers = bootstrapServers.strip();
    this.settings = Collections.unmodifiableMap(new TreeMap<>(settings));
  }

  /** A plaintext connection with Kafka's defaults. */
  public static KafkaConnection to(String bootstrapServers) {
    return new KafkaConnection(bootstrapServers, Map.of());
  }

  /**
   * A connection with the properties of {@code file} (Java properties syntax, as Kafka's own tools
   * read with {@code --command-config}); {@code file} null means plaintext with defaults.
   *
   * @throws IllegalArgumentException naming the file and the property that cannot be used
   */
  public static KafkaConnection of(String bootstrapServers, Path file) {
    if (file == null) {
      return to(bootstrapServers);
    }
    Properties loaded = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      loaded.load(in);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("--kafka-properties " + file + ": no such file");
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException("--kafka-properties " + file + ": " + e.getMessage());
    }
    Map<String, String> settings = new TreeMap<>();
    loaded.stringPropertyNames().forEach(k -> settings.put(k.strip(), loaded.getProperty(k)));
    return with(bootstrapServers, settings, "--kafka-properties " + file);
  }

  /**
   * A connection with {@code settings}; {@code origin} names where they came from in errors.
   *
   * @throws IllegalArgumentException for a property privagg sets itself or cannot use
   */
  public static KafkaConnection with(
      String bootstrapServers, Map<String, String> settings, String origin) {
    Map<String, String> kept = new TreeMap<>(settings);
    String fileBootstrap = kept.remove("bootstrap.servers");
    if (fileBootstrap != null && !fileBootstrap.strip().equals(bootstrapServers.strip())) {
      throw new IllegalArgumentException(
          "%s: bootstrap.servers=%s disagrees with --bootstrap-servers %s; give the brokers once"
              .formatted(origin, fileBootstrap, bootstrapServers));
    }
    for (String key : kept.keySet()) {
      if (!allowed(key)) {
        throw new IllegalArgumentException(
            ("%s: %s is not a connection or security property; privagg sets its clients' other"
                    + " properties itself (allowed: sasl.*, ssl.*, %s)")
                .formatted(origin, key, String.join(", ", new java.util.TreeSet<>(ALLOWED))));
      }
    }
    return new KafkaConnection(bootstrapServers, kept);
  }

  private static boolean allowed(String key) {
    return ALLOWED.contains(key) || key.startsWith("ssl.") || key.startsWith("sasl.");
  }

  /** The brokers, as given. */
  public String bootstrapServers() {
    return bootstrapServers;
  }

  /** The file's connection and security properties (secrets included: for clients only). */
  public Map<String, String> settings() {
    return settings;
  }

  /** A fresh set of client properties: the brokers plus the connection's own settings. */
  public Properties clientProperties() {
    Properties p = new Properties();
    p.putAll(settings);
    p.put("bootstrap.servers", bootstrapServers);
    return p;
  }

  /** {@code security.protocol}, PLAINTEXT when unset. */
  public String securityProtocol() {
    // Kafka reads the value case-insensitively; messages name it as Kafka spells it.
    return settings
        .getOrDefault("security.protocol", "PLAINTEXT")
        .strip()
        .toUpperCase(java.util.Locale.ROOT);
  }

  /**
   * The principal the brokers will see, as far as the client knows it: {@code User:NAME} from the
   * SASL login's username, or a description when TLS or Kerberos decides it.
   */
  public String principal() {
    Object username = jaasOptions().get("username");
    if (username != null) {
      return "User:" + username;
    }
    String protocol = securityProtocol();
    if (protocol.startsWith("SASL")) {
      return "the SASL principal of " + settings.getOrDefault("sasl.mechanism", "GSSAPI");
    }
    if (protocol.equals("SSL")) {
      return "the principal of the TLS client certificate";
    }
    return "User:ANONYMOUS";
  }

  /**
   * The options of the JAAS login, parsed as Kafka parses them (quotes of either kind, escapes): a
   * pattern over the raw line could take a password that contains {@code username="x"} for the
   * name. Empty when unset or unparsable (Kafka's own client then reports it).
   */
  private Map<String, ?> jaasOptions() {
    String jaas = settings.get("sasl.jaas.config");
    if (jaas == null) {
      return Map.of();
    }
    try {
      List<AppConfigurationEntry> entries =
          JaasContext.loadClientContext(Map.of("sasl.jaas.config", new Password(jaas)))
              .configurationEntries();
      return entries.isEmpty() ? Map.of() : entries.get(0).getOptions();
    } catch (IllegalArgumentException e) {
      return Map.of();
    }
  }

  /** Brokers, protocol, mechanism and principal; never a password, key or JAAS line. */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(bootstrapServers).append(" (").append(securityProtocol());
    if (securityProtocol().startsWith("SASL")) {
      s.append(", ").append(settings.getOrDefault("sasl.mechanism", "GSSAPI"));
    }
    return s.append(", ").append(principal()).append(')').toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KafkaConnection k
        && k.bootstrapServers.equals(bootstrapServers)
        && k.settings.equals(settings);
  }

  @Override
  public int hashCode() {
    return bootstrapServers.hashCode() * 31 + settings.hashCode();
  }
}
