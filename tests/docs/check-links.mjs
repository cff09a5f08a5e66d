// Every relative link of README.md and docs/ resolves: the file it names exists, and its anchor
// (#…) is a heading of that file, as GitHub makes anchors of headings. Links in code are not
// links. Usage: node check-links.mjs ROOT
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '.');

function markdownFiles(dir) {
    return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
        const path = join(dir, entry.name);
        return entry.isDirectory() ? markdownFiles(path) : entry.name.endsWith('.md') ? [path] : [];
    });
}

// The text outside fenced blocks and inline code, line by line (numbers kept).
function proseLines(text) {
    let fenced = false;
    return text.split('\n').map(line => {
        if (/^\s*```/.test(line)) {
            fenced = !fenced;
            return '';
        }
        return fenced ? '' : line.replace(/`[^`]*`/g, '``');
    });
}

// GitHub's anchors: lower case, punctuation but '-' and '_' dropped, spaces to '-', a repeated
// one numbered (-1, -2, …).
function anchors(path) {
    const seen = new Map();
    const result = new Set();
    let fenced = false;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (/^\s*```/.test(line))
            fenced = !fenced;
        const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
        if (!heading)
            continue;
        const slug = heading[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
        const count = seen.get(slug) ?? 0;
        seen.set(slug, count + 1);
        result.add(count ? `${slug}-${count}` : slug);
    }
    return result;
}

const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
const anchorCache = new Map();
const broken = [];
let checked = 0;
for (const file of files) {
    proseLines(readFileSync(file, 'utf8')).forEach((line, index) => {
        for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
            const target = match[1];
            if (/^[a-z][a-z0-9+.-]*:/i.test(target))
                continue; // https:, mailto: …
            checked++;
            const [pathPart, anchor] = target.split('#');
            const targetFile = pathPart ? resolve(dirname(file), decodeURIComponent(pathPart)) : file;
            const where = `${relative(root, file)}:${index + 1}: ${target}`;
            if (!existsSync(targetFile)) {
                broken.push(`${where}: no such file`);
                continue;
            }
            if (anchor === undefined)
                continue;
            if (statSync(targetFile).isDirectory() || !targetFile.endsWith('.md')) {
                broken.push(`${where}: an anchor into a file that is not Markdown`);
                continue;
            }
            if (!anchorCache.has(targetFile))
                anchorCache.set(targetFile, anchors(targetFile));
            if (!anchorCache.get(targetFile).has(anchor))
                broken.push(`${where}: no heading makes the anchor #${anchor}`);
        }
    });
}
if (broken.length) {
    console.error(`${broken.length} broken link(s):\n${broken.join('\n')}`);
    process.exit(1);
}
console.log(`${checked} relative links in ${files.length} files resolve`);
