package io.github.tenantintegration.generator;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes the api module's sources ({@code io.github.tenantintegration.api}) from the bundled contract
 * {@code spec/dist/openapi.json}: a record per object schema, a sealed interface per oneOf, the
 * {@code Scope} enum, {@code Schemas} (patterns, lengths, lifetimes) and the {@code JsonText} helper.
 * Every {@code x-assumption} reaches the Javadoc after the label of {@code spec/marks.mjs}
 * ({@code ASSUMPTION_LABEL}), read from that file so that the words are the docs site's.
 *
 * <pre>
 * java -cp ... io.github.tenantintegration.generator.Generate [--check] [--repo DIR]
 * </pre>
 *
 * <p>With {@code --check} nothing is written: it exits 1 naming each stale, missing or extra file
 * when the committed sources differ from what the contract gives ({@code pnpm lint} runs it).
 */
public final class Generate {
    /** Where the generated sources go, under the repository's root. */
    static final String OUT = "packages/java/api/src/main/java/io/github/tenantintegration/api";

    static final String PACKAGE = "io.github.tenantintegration.api";

    static final String HEADER =
            "// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.\n"
                    + "// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.\n";

    private static final Pattern LABEL = Pattern.compile("export const ASSUMPTION_LABEL = \"([^\"]+)\";");

    private Generate() {}

    /**
     * Runs the generator.
     *
     * @param args {@code --check} to compare instead of write; {@code --repo DIR} the repository's root
     *     (default: found upwards from the working directory)
     */
    public static void main(String[] args) {
        boolean check = List.of(args).contains("--check");
        int repoAt = List.of(args).indexOf("--repo");
        Path repo =
                repoAt >= 0 ? Path.of(args[repoAt + 1]) : findRepo(Path.of("").toAbsolutePath());
        List<String> problems = run(repo, check);
        if (!problems.isEmpty()) {
            System.err.println(
                    "generate: the api module is stale (run: pnpm --filter @tenant-integration/java generate):");
            problems.forEach(p -> System.err.println("  " + p));
            System.exit(1);
        }
        System.out.println(check ? "generate: the api module is fresh" : "generate: wrote " + OUT);
    }

    /** Generates, then writes (or only compares, when {@code check}); returns what differed. */
    static List<String> run(Path repo, boolean check) {
        Map<String, String> files = files(read(repo.resolve("spec/dist/openapi.json")), label(repo));
        Path out = repo.resolve(OUT);
        List<String> problems = new ArrayList<>();
        try {
            Files.createDirectories(out);
            try (Stream<Path> existing = Files.list(out)) {
                for (Path path : existing.toList()) {
                    if (!files.containsKey(path.getFileName().toString())) {
                        problems.add("extra: " + path.getFileName());
                        if (!check) Files.delete(path);
                    }
                }
            }
            for (Map.Entry<String, String> file : files.entrySet()) {
                Path path = out.resolve(file.getKey());
                String old = Files.exists(path) ? Files.readString(path) : null;
                if (file.getValue().equals(old)) continue;
                problems.add((old == null ? "missing: " : "stale: ") + file.getKey());
                if (!check) Files.writeString(path, file.getValue(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return check ? problems : List.of();
    }

    /** Every generated file, by name. */
    static Map<String, String> files(Map<String, Object> doc, String label) {
        Javadoc javadoc = new Javadoc(label);
        Map<String, Object> schemas = object(object(doc.get("components")).get("schemas"));
        Map<String, String> files = new TreeMap<>();
        Records records = new Records(schemas, javadoc);
        for (String name : schemas.keySet()) {
            String file = records.file(name);
            if (file != null) files.put(name + ".java", file);
        }
        Constants constants = new Constants(doc, javadoc);
        files.put("Scope.java", constants.scopes());
        files.put("Schemas.java", constants.schemas());
        files.put("JsonText.java", HEADER + Templates.JSON_TEXT);
        files.put("package-info.java", HEADER + Templates.PACKAGE_INFO);
        return files;
    }

    /** The assumption label of spec/marks.mjs. */
    static String label(Path repo) {
        Path marks = repo.resolve("spec/marks.mjs");
        try {
            Matcher matcher = LABEL.matcher(Files.readString(marks));
            if (!matcher.find()) throw new IllegalStateException(marks + " has no ASSUMPTION_LABEL");
            return matcher.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Map<String, Object> read(Path bundle) {
        try {
            return JSON.std.mapFrom(Files.readString(bundle));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + bundle + " (run pnpm build first)", e);
        }
    }

    /** The repository's root: the first directory upwards holding spec/dist/openapi.json. */
    static Path findRepo(Path from) {
        for (Path dir = from; dir != null; dir = dir.getParent()) {
            if (Files.exists(dir.resolve("spec/dist/openapi.json"))) return dir;
        }
        throw new IllegalStateException("no spec/dist/openapi.json above " + from + ": pass --repo");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object value) {
        if (value instanceof Map<?, ?> map) return (Map<String, Object>) map;
        throw new IllegalArgumentException("expected a JSON object, found " + value);
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object value) {
        if (value instanceof List<?> list) return (List<Object>) list;
        throw new IllegalArgumentException("expected a JSON array, found " + value);
    }
}
