"""sha256 of the source files `datasets.origins` fetches, keyed OWNER/REPO/COMMIT/PATH: the manifest that travels
with the package. A later fetch is checked against it (`fetch` removes a file that differs and says so).

The sources listed are those whose bytes the project's own copy holds unchanged (Multi30k task 2's raw files; task
1's are in `checksums.SHA256`). A source not listed here is recorded at its first download in
`DATA/.sources/SHA256SUMS`, and later downloads into that data root are checked against that record; a maintainer
adds those records here (`bridgeembed-data recipe general-m2m --print-manifest` prints them in this form).
"""

SHA256 = {
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.1.de.gz":
        "0002241b52aba5160c08d644ea0d64a9bf46a2dfffcf619c9e3cdaa55b357004",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.1.en.gz":
        "a0e057f07a9733199c0d755d77f6d583dc6f40a3180734b1130a216e2fdf3a3b",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.2.de.gz":
        "ac7c29258b90aec0b64d677c5bfc831fc402e6296d0aa9cc7a3433ddbff85c37",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.2.en.gz":
        "d79dd70a9eafb2d1fe40151621278c4ae69b3c148c5052a53d7c7a41bf3ba023",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.3.de.gz":
        "ec5e6508813814aa31311b34e26e24f903dd7701f8d0668313259b7f975d7aa0",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.3.en.gz":
        "86e16fdcc699bcb6bca0f87c3cf1051f7de5ee3674dd588cedc5200194282749",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.4.de.gz":
        "bcee8ac6eb47d8a7dc8cff47d9a0fbd80b4363cfda22021bacd297f9604221a4",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.4.en.gz":
        "3771b84e010ad6197806d2a1188cb07c12149e3e0d178dd5966dee5763733686",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.5.de.gz":
        "dccb0ca6ff25e0b1f0d385f59fb809184e0db89622d88371725e3ec46d43bfc0",
    "multi30k/dataset/a3d2e0d/data/task2/raw/train.5.en.gz":
        "73988689307fe836994eae59735dc840c15da9775455fa76e6ed22606a042a91",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.1.de.gz":
        "a6b9ad98bdab8882d2ac40d1bc05db89341947162c07d2d0d27e80f01897ba05",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.1.en.gz":
        "4ce8f8ffbef4a1c066e3f35a5ffc764666c26c318a733d9bdc6349577f1c6f9c",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.2.de.gz":
        "dbbf0f8fa54fdb4a3c64d22a1c0773ade3f775c39e4513ab5ca6d683025086dc",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.2.en.gz":
        "4103944d652127e5af33ba2761d71cb6c0e1509c1a67d4387dc67ad768cfb752",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.3.de.gz":
        "5eac83b577fe9bc781e60b609545123804e9dd29de4c2bd1b9e178ad8b29a1da",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.3.en.gz":
        "6ecd848713d98faa9c6db2e9e457a778335358e6e3a4743cf4e929a0516e399a",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.4.de.gz":
        "1c3054cfd1e47f17d8a20fcec6615cfd26d7dc2c8c4ef4625cd9db9f4e4590ea",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.4.en.gz":
        "bfab4f0cbdac6233f206bbbfbd324dc02b258e291c3f410a69f9884171008788",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.5.de.gz":
        "185d6cb907313e6a6eef76f09c657e5748e08ee3c7a5b26200186e171e2c8344",
    "multi30k/dataset/a3d2e0d/data/task2/raw/val.5.en.gz":
        "4b6a6541b7b58d545eff7feead4187aeb0439a7178a7bed6951121e0ecbaee66",
}
